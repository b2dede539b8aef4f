/*
 * cli.h: the command line.  cli_main runs one command and returns the
 * process's exit status: 0 done, 1 an error explained in one line on
 * stderr, 2 a usage error.
 */
#ifndef PAPO_CLI_H
#define PAPO_CLI_H

#define CLI_OK 0
#define CLI_ERROR 1
#define CLI_USAGE 2

int cli_main(int argc, char **argv);

#endif
