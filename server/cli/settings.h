/*
 * settings.h: papo serve's settings, each declared once in a table
 * (settings.c): its environment variable, its flag if it has one, the
 * kind of value it takes, its default, one line of help, and the field
 * of struct serve_config its value goes to.  The parser, the errors for
 * bad values and the settings section of 'papo serve --help' all come
 * from that table.
 */
#ifndef PAPO_SETTINGS_H
#define PAPO_SETTINGS_H

#include <stdio.h>

#include "server/daemon/serve.h"

/* A flag given on the command line, by its name ("--http"), with its
 * value; it wins over the setting's environment variable. */
struct setting_arg {
	const char *flag;
	const char *value;
};

/*
 * Fills c from args (nargs of them; a NULL value is not given), else the
 * environment, else each setting's default, and checks every value and
 * the rules between settings.  c->node.home is left for the caller (it
 * is PAPO_HOME, else ~/.papo).  -1 with err naming the setting and what
 * it takes; c then holds nothing to free.  The strings c points to are
 * args' and the environment's.
 */
int settings_load(char err[PAPO_ERR_LEN], struct serve_config *c,
    const struct setting_arg *args, size_t nargs);

/*
 * One setting read on its own, from the environment only, into out (of
 * its kind's type: int for PAPO_LOG's level): for PAPO_LOG, which every
 * command reads at start.  1 when set, 0 when unset (out untouched), -1
 * with err as settings_load's.
 */
int settings_get(char err[PAPO_ERR_LEN], const char *env, void *out);

/* The settings section of 'papo serve --help': each setting users may
 * set, with its flag, what it takes, its default and its help. */
void settings_help(FILE *f);

#endif
