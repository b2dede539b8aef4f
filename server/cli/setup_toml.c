/*
 * setup_toml.c: Codex's config.toml, where only papo's own table
 * ([mcp_servers.papo]) is replaced or taken out and every other byte is
 * left: a small lexer finds the table's start and end, strings are
 * written in TOML's basic form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/setup.h"
#include "server/cli/setup_int.h"

/* Appends s to m as a TOML basic string. */
static void
toml_str(FILE *m, const char *s)
{
	fputc('"', m);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
	    p++) {
		const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" :
		    *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" :
		    NULL;

		if (esc != NULL)
			fputs(esc, m);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(m, "\\u%04X", *p);
		else
			fputc(*p, m);
	}
	fputc('"', m);
}

/* papo's table for Codex, from the entry's strings, arrays of strings
 * and objects of strings (env, inline). */
static char *
toml_block(const cJSON *entry, size_t *len)
{
	const cJSON *v, *x;
	char *out = NULL;
	FILE *m;

	if ((m = open_memstream(&out, len)) == NULL)
		return NULL;
	fputs("[mcp_servers.papo]\n", m);
	cJSON_ArrayForEach(v, entry) {
		fprintf(m, "%s = ", v->string);
		if (cJSON_IsString(v))
			toml_str(m, v->valuestring);
		else {
			fputs(cJSON_IsArray(v) ? "[" : "{ ", m);
			cJSON_ArrayForEach(x, v) {
				if (x != v->child)
					fputs(", ", m);
				if (cJSON_IsObject(v))
					fprintf(m, "%s = ", x->string);
				toml_str(m, cJSON_GetStringValue(x));
			}
			fputs(cJSON_IsArray(v) ? "]" : " }", m);
		}
		fputc('\n', m);
	}
	if (fclose(m) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* A table header's or key's name with its quotes and blanks taken out
 * ([ mcp_servers . "papo" ] is mcp_servers.papo), up to stop. */
static void
toml_name(const char *p, const char *eol, char stop, char *out, size_t n)
{
	size_t k = 0;
	char q = 0;

	for (; p < eol; p++) {
		if (q == 0 && (*p == '"' || *p == '\'')) {
			q = *p;
			continue;
		}
		if (q != 0 && *p == q) {
			q = 0;
			continue;
		}
		if (q == 0 && *p == stop)
			break;
		if ((q != 0 || (*p != ' ' && *p != '\t')) && k + 1 < n)
			out[k++] = *p;
	}
	out[k] = '\0';
}

static int
toml_is_papo(const char *name)
{
	return strcmp(name, "mcp_servers.papo") == 0 ||
	    strncmp(name, "mcp_servers.papo.", 17) == 0;
}

/* Where a TOML value stands at the end of a line: in a multi-line string
 * (ml is its quote), and how deep in brackets and braces. */
struct toml_lex {
	char ml;
	int depth;
	int opened;               /* the line where either began */
};

/* Follows strings and brackets through one line of a value; -1 at a
 * one-line string or a bracket that does not match. */
static int
toml_lex(struct toml_lex *x, const char *p, const char *eol, int line)
{
	for (; p < eol; p++) {
		if (x->ml != 0) {
			if (x->ml == '"' && *p == '\\')
				p++;
			else if (eol - p >= 3 && p[0] == x->ml && p[1] == x->ml &&
			    p[2] == x->ml) {
				x->ml = 0;
				p += 2;
			}
			continue;
		}
		if (*p == '#')
			break;
		if (*p == '"' || *p == '\'') {
			char q = *p;

			if (eol - p >= 3 && p[1] == q && p[2] == q) {
				x->ml = q;
				x->opened = line;
				p += 2;
				continue;
			}
			for (p++; p < eol && *p != q; p++)
				if (q == '"' && *p == '\\')
					p++;
			if (p >= eol)
				return -1;
		} else if (*p == '[' || *p == '{') {
			if (x->depth++ == 0)
				x->opened = line;
		} else if ((*p == ']' || *p == '}') && x->depth-- == 0)
			return -1;
	}
	return 0;
}

/* Where papo's table is in a TOML text: from its header to the end of
 * its last key's line (comments and blank lines after it are the next
 * table's). */
struct toml_at {
	int found;
	size_t start, end;
};

/*
 * Finds papo's table: [mcp_servers.papo] and any [mcp_servers.papo.*]
 * right after it.  Only as much of TOML is read as tells a table header
 * from a line of a value.  -1 when a string or bracket does not close,
 * or when papo's server is defined in a form a table of papo's own
 * would clash with (a dotted key, an inline table).
 */
static int
toml_find(char err[PAPO_ERR_LEN], const struct sfile *f, struct toml_at *at)
{
	struct toml_lex x = { 0, 0, 0 };
	char section[256] = "", name[256];
	const char *t = f->text, *end = f->text + f->len, *p, *q, *eol, *next;
	int line = 0, in = 0, left = 0;

	memset(at, 0, sizeof(*at));
	if (memchr(t, '\0', f->len) != NULL) {
		snprintf(err, PAPO_ERR_LEN, "%s holds a NUL byte, so it is not "
		    "TOML: it was left as it is", f->path);
		return -1;
	}
	for (p = t; p < end; p = next) {
		eol = memchr(p, '\n', (size_t)(end - p));
		next = eol != NULL ? eol + 1 : end;
		eol = eol != NULL ? eol : end;
		line++;
		q = p + strspn(p, " \t");
		if (x.ml != 0 || x.depth > 0 || (q < eol && *q != '#' &&
		    *q != '\r' && *q != '[')) {
			if (x.ml == 0 && x.depth == 0) {
				toml_name(q, eol, '=', name, sizeof(name));
				if ((section[0] == '\0' && (toml_is_papo(name) ||
				    strcmp(name, "mcp_servers") == 0)) ||
				    (strcmp(section, "mcp_servers") == 0 &&
				    (strcmp(name, "papo") == 0 ||
				    strncmp(name, "papo.", 5) == 0))) {
					snprintf(err, PAPO_ERR_LEN, "%s, line %d: papo's "
					    "server is defined in a form papo setup does "
					    "not edit (%s): the file was left as it is; "
					    "edit it by hand", f->path, line, name);
					return -1;
				}
			}
			if (toml_lex(&x, q, eol, line) == -1) {
				snprintf(err, PAPO_ERR_LEN, "%s, line %d: a string or "
				    "bracket that does not close; the file was left "
				    "as it is", f->path, line);
				return -1;
			}
			if (in)
				at->end = (size_t)(next - t);
			continue;
		}
		if (q >= eol || *q != '[')
			continue;
		q += q + 1 < eol && q[1] == '[' ? 2 : 1;
		toml_name(q, eol, ']', section, sizeof(section));
		if (!toml_is_papo(section)) {
			left |= in;
			in = 0;
			continue;
		}
		if (left) {
			snprintf(err, PAPO_ERR_LEN, "%s, line %d: papo's table comes "
			    "in parts apart: the file was left as it is; edit it by "
			    "hand", f->path, line);
			return -1;
		}
		if (!at->found)
			at->start = (size_t)(p - t);
		at->found = in = 1;
		at->end = (size_t)(next - t);
	}
	if (x.ml != 0 || x.depth > 0) {
		snprintf(err, PAPO_ERR_LEN, "%s, line %d: a string or bracket "
		    "opened there does not close; the file was left as it is",
		    f->path, x.opened);
		return -1;
	}
	return 0;
}

/*
 * Codex: papo's table written as a block in place of the one there (or
 * after everything), or taken out with the blank line that set it
 * apart; every other byte of the file stays.
 */
int
setup_toml(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const cJSON *entry)
{
	struct toml_at at;
	enum setup_said said;
	char *block = NULL, *out = NULL;
	size_t blen = 0, olen = 0, start;
	FILE *m;
	int rc = -1;

	if (toml_find(err, f, &at) == -1)
		return -1;
	if (entry != NULL && (block = toml_block(entry, &blen)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		return -1;
	}
	if (block == NULL)
		said = at.found ? SAID_REMOVE : SAID_ABSENT;
	else if (!at.found)
		said = SAID_ADD;
	else
		said = at.end - at.start == blen && memcmp(f->text + at.start,
		    block, blen) == 0 ? SAID_SAME : SAID_UPDATE;
	if (said <= SAID_REMOVE) {
		start = at.found ? at.start : f->len;
		if (block == NULL && start >= 2 && f->text[start - 1] == '\n' &&
		    f->text[start - 2] == '\n')
			start--;
		if ((m = open_memstream(&out, &olen)) == NULL) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		fwrite(f->text, 1, start, m);
		if (!at.found && f->len > 0)
			fputs(f->text[f->len - 1] == '\n' ? "\n" : "\n\n", m);
		if (block != NULL)
			fwrite(block, 1, blen, m);
		if (at.found)
			fwrite(f->text + at.end, 1, f->len - at.end, m);
		if (fclose(m) != 0) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		/* A file papo's table alone made is papo's: removed. */
		if ((block == NULL && out[strspn(out, " \t\r\n")] == '\0' ?
		    sfile_unlink(err, s, f) : sfile_save(err, s, f, out, olen)) ==
		    -1)
			goto out;
	}
	setup_say(s, f->path, "[mcp_servers.papo]", s->remove ? "papo's MCP "
	    "server" : s->http ? "papo's MCP server (HTTP)" : "papo's MCP "
	    "server (stdio)", said, block);
	rc = 0;
out:
	free(block);
	free(out);
	return rc;
}
