/*
 * setup.h: 'papo setup CLIENT', which adds papo to an agent harness's own
 * configuration files, takes it out again, or shows what it would write
 * (setup.c).  For the main thread of a short-lived command.
 */
#ifndef PAPO_SETUP_H
#define PAPO_SETUP_H

/*
 * Runs 'papo setup' with argv[0] "setup"; usage and help are the command
 * table's (cli.c).  Returns the exit status: CLI_OK, CLI_ERROR (one line
 * on stderr, no file changed by the step that failed) or CLI_USAGE.
 */
int setup_main(const char *usage, const char *help, int argc, char **argv);

#endif
