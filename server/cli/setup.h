/*
 * setup.h: 'papo setup CLIENT', which adds papo to an agent harness's own
 * configuration files, takes it out again, or shows what it would write
 * (setup.c).  For the main thread of a short-lived command.
 */
#ifndef PAPO_SETUP_H
#define PAPO_SETUP_H

/* What setup_main returns: the process's exit status, the values of
 * cli.h's CLI_OK, CLI_ERROR and CLI_USAGE (cli.c, above this file,
 * returns it as it is, and checks that they agree). */
#define SETUP_OK 0
#define SETUP_ERROR 1
#define SETUP_USAGE 2

/*
 * Runs 'papo setup' with argv[0] "setup"; usage and help are the command
 * table's (cli.c).  Returns the exit status: SETUP_OK, SETUP_ERROR (one
 * line on stderr, no file changed by the step that failed) or
 * SETUP_USAGE.
 */
int setup_main(const char *usage, const char *help, int argc, char **argv);

#endif
