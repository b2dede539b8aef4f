/*
 * setup_json.c: a harness's JSON settings, edited by key path (sj_put,
 * the one mechanism for every setting): the document parsed, a key set
 * or deleted with every other key kept, the text a setting would have
 * printed, the document written back whole.  A file that does not parse
 * is left alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "node/node.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"

/* A leaf, or a key when key is not NULL, as JSON text (cJSON's own
 * escaping). */
static int
sj_leaf(FILE *m, const cJSON *v, const char *key)
{
	cJSON *k = key != NULL ? cJSON_CreateString(key) : NULL;
	char *t = cJSON_PrintUnformatted(key != NULL ? k : v);

	if (t != NULL)
		fputs(t, m);
	cJSON_free(t);
	cJSON_Delete(k);
	return t != NULL ? 0 : -1;
}

/* v laid out as JSON.stringify(v, null, 2) does (depth 1000 at most:
 * cJSON parses no deeper). */
static int
sj_emit(FILE *m, const cJSON *v, int depth)
{
	const cJSON *x;
	int obj = cJSON_IsObject(v);

	if (!obj && !cJSON_IsArray(v))
		return sj_leaf(m, v, NULL);
	if (v->child == NULL) {
		fputs(obj ? "{}" : "[]", m);
		return 0;
	}
	fputc(obj ? '{' : '[', m);
	cJSON_ArrayForEach(x, v) {
		fprintf(m, "%s\n%*s", x == v->child ? "" : ",", 2 * depth + 2, "");
		if ((obj && sj_leaf(m, NULL, x->string) == -1) ||
		    (obj && fputs(": ", m) == EOF) || sj_emit(m, x, depth + 1) == -1)
			return -1;
	}
	fprintf(m, "\n%*s%c", 2 * depth, "", obj ? '}' : ']');
	return 0;
}

/*
 * A JSON value as the harnesses write their own files (two spaces, a
 * final newline), so that a file keeps its layout but for what changed.
 */
char *
sj_print(const cJSON *v, size_t *len)
{
	char *out = NULL;
	FILE *m;
	int rc;

	if ((m = open_memstream(&out, len)) == NULL)
		return NULL;
	rc = sj_emit(m, v, 0);
	fputc('\n', m);
	if (fclose(m) != 0 || rc == -1) {
		free(out);
		return NULL;
	}
	return out;
}

/* Reads and parses a JSON file; absent or blank, it is {}. */
int
sj_load(char err[PAPO_ERR_LEN], const struct setup *s, struct sfile *f)
{
	const char *end = NULL;
	char *plain;
	int line = 1, col = 1;

	if (sfile_load(err, f) == -1)
		return -1;
	if (f->text[strspn(f->text, " \t\r\n")] == '\0' && strlen(f->text) ==
	    f->len) {
		f->doc = cJSON_CreateObject();
		return f->doc != NULL ? 0 : -1;
	}
	/* cJSON reads up to a NUL; what followed would be lost. */
	if (strlen(f->text) != f->len) {
		snprintf(err, PAPO_ERR_LEN, "%s holds a NUL byte, so it is not "
		    "JSON: it was left as it is", f->path);
		return -1;
	}
	if ((f->doc = cJSON_ParseWithOpts(f->text, &end, 1)) == NULL) {
		for (const char *p = f->text; end != NULL && p < end; p++) {
			col = *p == '\n' ? 1 : col + 1;
			line += *p == '\n';
		}
		/* VS Code's files may hold comments, which JSON has not: say
		 * so, rather than point at the first one. */
		if ((plain = strdup(f->text)) != NULL) {
			cJSON_Minify(plain);
			f->doc = cJSON_Parse(plain);
			free(plain);
		}
		if (f->doc != NULL)
			snprintf(err, PAPO_ERR_LEN, "%s has comments, which papo "
			    "setup would lose: it was left as it is; add papo by "
			    "hand ('papo setup %s --print' shows the entry)",
			    f->path, s->c->name);
		else
			snprintf(err, PAPO_ERR_LEN, "%s is not valid JSON (line %d, "
			    "column %d): it was left as it is; fix it, or add papo "
			    "by hand", f->path, line, col);
		return -1;
	}
	if (!cJSON_IsObject(f->doc)) {
		snprintf(err, PAPO_ERR_LEN, "%s holds JSON that is not an object: "
		    "it was left as it is", f->path);
		return -1;
	}
	return 0;
}

/*
 * The object holding the last segment of the dotted key, in *parent
 * (NULL when missing and not create) and that segment in *leaf.  -1 when
 * a segment on the way is there but not an object.
 */
static int
sj_parent(char err[PAPO_ERR_LEN], const struct sfile *f, const char *key,
    int create, char buf[SETUP_KEY_MAX], cJSON **parent, const char **leaf)
{
	cJSON *o = f->doc, *next;
	char *seg, *dot;

	snprintf(buf, SETUP_KEY_MAX, "%s", key);
	for (seg = buf; (dot = strchr(seg, '.')) != NULL; seg = dot + 1) {
		*dot = '\0';
		next = cJSON_GetObjectItemCaseSensitive(o, seg);
		if (next == NULL && create)
			next = cJSON_AddObjectToObject(o, seg);
		if (next != NULL && !cJSON_IsObject(next)) {
			snprintf(err, PAPO_ERR_LEN, "%s: \"%s\" is not an object: "
			    "the file was left as it is", f->path, seg);
			return -1;
		}
		if ((o = next) == NULL)
			break;
	}
	*parent = o;
	*leaf = seg;
	return 0;
}

/* Deletes the dotted key, then each object on its path it left empty. */
static void
sj_delete(cJSON *doc, const char *key)
{
	char buf[SETUP_KEY_MAX], *seg[8];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", key);
	for (char *p = buf; n < 8 && p != NULL; n++) {
		seg[n] = p;
		if ((p = strchr(p, '.')) != NULL)
			*p++ = '\0';
	}
	for (int k = n; k >= 1; k--) {
		cJSON *o = doc, *child;

		for (int i = 0; i < k - 1 && o != NULL; i++)
			o = cJSON_GetObjectItemCaseSensitive(o, seg[i]);
		child = cJSON_GetObjectItemCaseSensitive(o, seg[k - 1]);
		if (child == NULL || (k < n && (!cJSON_IsObject(child) ||
		    child->child != NULL)))
			return;
		cJSON_DeleteItemFromObjectCaseSensitive(o, seg[k - 1]);
	}
}

/*
 * The one way a JSON setting changes: makes the dotted key hold val
 * (taken; NULL: absent).  Returns what that did, or -1.
 */
int
sj_set(char err[PAPO_ERR_LEN], struct sfile *f, const char *key, cJSON *val)
{
	char buf[SETUP_KEY_MAX];
	const char *leaf;
	cJSON *parent, *old;
	enum setup_said said;

	if (sj_parent(err, f, key, val != NULL, buf, &parent, &leaf) == -1) {
		cJSON_Delete(val);
		return -1;
	}
	old = cJSON_GetObjectItemCaseSensitive(parent, leaf);
	if (val == NULL)
		said = old == NULL ? SAID_ABSENT : SAID_REMOVE;
	else if (old != NULL && cJSON_Compare(old, val, 1))
		said = SAID_SAME;
	else
		said = old != NULL ? SAID_UPDATE : SAID_ADD;
	if (said == SAID_REMOVE)
		sj_delete(f->doc, key);
	else if (said == SAID_UPDATE)
		cJSON_ReplaceItemInObjectCaseSensitive(parent, leaf, val);
	else if (said == SAID_ADD)
		cJSON_AddItemToObject(parent, leaf, val);
	else
		cJSON_Delete(val);
	f->dirty |= said <= SAID_REMOVE;
	return (int)said;
}

/* sj_set, said in a line naming the file, the key and what it holds. */
int
sj_put(char err[PAPO_ERR_LEN], struct setup *s, struct sfile *f,
    const char *key, cJSON *val, const char *what)
{
	char *show = NULL;
	size_t n;
	int said;

	if (val != NULL)
		show = sj_print(val, &n);
	if ((said = sj_set(err, f, key, val)) != -1)
		setup_say(s, f->path, key, what, (enum setup_said)said, show);
	free(show);
	return said == -1 ? -1 : 0;
}

/* Writes a JSON file back when something in it changed; one that
 * --remove left holding nothing ({}), papo's own, is removed. */
int
sj_save(char err[PAPO_ERR_LEN], const struct setup *s, const struct sfile *f)
{
	char *text;
	size_t len;
	int rc;

	if (!f->dirty)
		return 0;
	if (s->remove && f->doc->child == NULL)
		return sfile_unlink(err, s, f);
	if ((text = sj_print(f->doc, &len)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory writing %s", f->path);
		return -1;
	}
	/* A file that ended without a newline (as `qwen mcp add` writes
	 * them) keeps ending so. */
	if (f->exists && f->len > 0 && f->text[f->len - 1] != '\n')
		len--;
	rc = sfile_save(err, s, f, text, len);
	free(text);
	return rc;
}
