/*
 * fuzz_markdown.c: libFuzzer target for server/api/markdown.c.  Any bytes
 * must render, never crash, and what comes out must hold no markup a
 * message could have smuggled: no tag but those CommonMark and GitHub's
 * extensions make (and papo's mention span and excerpt mark), no link
 * to a scheme other than http, https and mailto, no image, and valid
 * UTF-8 (it goes into JSON).  The same bytes as a search excerpt, with
 * marks made of its first bytes, too; no mark's sentinel left in it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "lib/utf8.h"
#include "server/api/markdown.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* cmark-gfm's registry of extensions is made once, at the first
 * render, and kept for the process's life: made here, before the
 * inputs, so that no input's leak check counts it. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	free(markdown_html("x", 1));
	return 0;
}

/* The elements cmark-gfm's HTML renderer makes of a tree without raw
 * HTML or images, with its table, strikethrough and autolink
 * extensions, and papo's two custom nodes (span, mark). */
static const char *const tags[] = { "p", "h1", "h2", "h3", "h4", "h5",
    "h6", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote",
    "hr", "br", "a", "table", "thead", "tbody", "tr", "th", "td", "del",
    "span", "mark", NULL };

static int
tag_ok(const char *t)
{
	size_t n = strspn(t, "abcdefghijklmnopqrstuvwxyz123456");

	for (size_t i = 0; tags[i] != NULL; i++)
		if (strlen(tags[i]) == n && strncmp(t, tags[i], n) == 0)
			return 1;
	return 0;
}

static int
href_ok(const char *h)
{
	size_t n = strcspn(h, ":/?#\"");

	return h[n] != ':' || strncasecmp(h, "http:", 5) == 0 ||
	    strncasecmp(h, "https:", 6) == 0 ||
	    strncasecmp(h, "mailto:", 7) == 0;
}

/* html as markdown.h promises it, else abort; then freed. */
static void
html_check(char *html)
{
	if (html == NULL)
		return;                /* out of memory */
	if (!utf8_valid(html, strlen(html)))
		abort();
	for (const char *p = html; (p = strchr(p, '<')) != NULL; p++) {
		const char *t = p[1] == '/' ? p + 2 : p + 1;

		if (!tag_ok(t))
			abort();
		if (strncmp(t, "a ", 2) == 0) {
			const char *h = strstr(t, "href=\"");

			if (h == NULL || !href_ok(h + 6))
				abort();
		}
	}
	free(html);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *marks;
	char *text, *h;

	html_check(markdown_html((const char *)data, size));
	/* An excerpt: its text, NUL-terminated as JSON gives it; marks
	 * from the first bytes, in pairs, in whatever order they come. */
	if ((text = strndup((const char *)data, size)) == NULL ||
	    (marks = cJSON_CreateArray()) == NULL) {
		free(text);
		return 0;
	}
	for (size_t i = 0; i + 1 < size && i < 8; i += 2) {
		int pair[2] = { data[i] % 64, data[i] % 64 + data[i + 1] % 16 };

		cJSON_AddItemToArray(marks, cJSON_CreateIntArray(pair, 2));
	}
	h = markdown_excerpt(text, marks);
	if (h != NULL && (strstr(h, "\xee\x80\x80") != NULL ||
	    strstr(h, "\xee\x80\x81") != NULL))
		abort();
	html_check(h);
	cJSON_Delete(marks);
	free(text);
	return 0;
}
