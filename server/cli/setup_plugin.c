/*
 * setup_plugin.c: a harness whose wake is a plugin file papo writes
 * (opencode: server/cli/opencode_plugin.js, built into this binary): the
 * file made from the text with this binary's path and PAPO_HOME put in,
 * replaced only when it is papo's (its first line is the text's), and
 * removed by --remove only then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"

/* Built from server/cli/opencode_plugin.js by CMakeLists.txt. */
extern const unsigned char server_cli_opencode_plugin_js[];
extern const size_t server_cli_opencode_plugin_js_len;

/* s with each of the placeholders replaced by the value as a JSON
 * string (which JavaScript reads as it is); the placeholder may stand
 * in quotes of its own, which go. */
static char *
plugin_fill(const char *text, const char *const from[], const char *const to[],
    size_t n)
{
	char *out = NULL, *lit[4];
	size_t len = 0, k;
	FILE *m;

	for (k = 0; k < n; k++) {
		cJSON *v = cJSON_CreateString(to[k]);

		lit[k] = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
		cJSON_Delete(v);
	}
	if ((m = open_memstream(&out, &len)) == NULL)
		goto out;
	for (const char *p = text; *p != '\0';) {
		for (k = 0; k < n; k++) {
			size_t fl = strlen(from[k]);
			int q = (*p == '"' || *p == '\'') &&
			    strncmp(p + 1, from[k], fl) == 0 && p[fl + 1] == *p;

			if (q || strncmp(p, from[k], fl) == 0) {
				fputs(lit[k] != NULL ? lit[k] : "\"\"", m);
				p += fl + (q ? 2 : 0);
				break;
			}
		}
		if (k == n)
			fputc(*p++, m);
	}
	if (fclose(m) != 0) {
		free(out);
		out = NULL;
	}
out:
	for (k = 0; k < n; k++)
		cJSON_free(lit[k]);
	return out;
}

/* Whether the file's first line is the plugin's: papo wrote it. */
static int
plugin_is_papos(const struct sfile *f, const char *text)
{
	size_t n = strcspn(text, "\n");

	return f->len >= n && strncmp(f->text, text, n) == 0;
}

int
setup_plugin(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f)
{
	static const char *const from[] = { "@PAPO_HOME@", "@PAPO@" };
	const char *to[] = { s->papo_home, s->exe };
	const char *text = (const char *)server_cli_opencode_plugin_js;
	enum setup_said said;
	char *want = NULL;
	int rc = -1;

	if (!s->remove && (want = plugin_fill(text, from, to, 2)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	if (f->exists && !plugin_is_papos(f, text)) {
		if (!s->remove) {
			snprintf(err, PAPO_ERR_LEN, "%s is not papo's plugin: it "
			    "was left as it is (move it away, then run papo "
			    "setup %s again)", f->path, s->c->name);
			goto out;
		}
		said = SAID_ABSENT;
	} else if (s->remove)
		said = f->exists ? SAID_REMOVE : SAID_ABSENT;
	else if (!f->exists)
		said = SAID_ADD;
	else
		said = strlen(want) == f->len && memcmp(want, f->text, f->len) ==
		    0 ? SAID_SAME : SAID_UPDATE;
	f->dirty = said <= SAID_REMOVE;
	setup_say(s, f->path, "the plugin", "papo's wake (papo hook "
	    "opencode)", said, NULL);
	if (want != NULL) {
		free(f->text);
		f->text = want;
		f->len = strlen(want);
		want = NULL;
	}
	rc = 0;
out:
	free(want);
	return rc;
}

/* Writes (or with --remove, removes) the plugin when it changes. */
int
setup_plugin_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f)
{
	if (!f->dirty)
		return 0;
	return s->remove ? sfile_unlink(err, s, f) :
	    sfile_save(err, s, f, f->text, f->len);
}
