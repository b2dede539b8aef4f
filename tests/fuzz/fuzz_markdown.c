/*
 * fuzz_markdown.c: libFuzzer target for server/api/markdown.c.  Any bytes
 * must render, never crash, and what comes out must hold no markup a
 * message could have smuggled: no tag but those CommonMark makes, no
 * link to a scheme other than http, https and mailto, no image, and
 * valid UTF-8 (it goes into JSON).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/utf8.h"
#include "server/api/markdown.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The elements cmark's HTML renderer makes of a tree without raw HTML,
 * images or custom nodes. */
static const char *const tags[] = { "p", "h1", "h2", "h3", "h4", "h5",
    "h6", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote",
    "hr", "br", "a", NULL };

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

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *html = markdown_html((const char *)data, size);

	if (html == NULL)
		return 0;              /* out of memory */
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
	return 0;
}
