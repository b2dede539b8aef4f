/*
 * test_markdown.c: server/api/markdown.c.  Headings, fences, lists and
 * links as CommonMark renders them; links to schemes
 * that run or embed (javascript:, data:, vbscript:, file:) left as text;
 * raw HTML shown as text, never elements;
 * images as links, never <img>; every link opening apart; long input;
 * invalid UTF-8 replaced; the JSON a message or a history carries.
 * GitHub's extensions (issue 37): tables, ~~strikethrough~~, bare URLs
 * as links; @names in a span; a search excerpt with its words marked.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include <sodium.h>

#include "check.h"
#include "node/wire/private.h"
#include "server/api/markdown.h"

#define SAFE_A "<a rel=\"noopener noreferrer\" target=\"_blank\" href=\""

static char *
md(const char *s)
{
	char *h = markdown_html(s, strlen(s));

	if (h == NULL) {
		fprintf(stderr, "markdown_html returned NULL\n");
		exit(1);
	}
	return h;
}

/* Whether the HTML of s contains want. */
static int
has(const char *s, const char *want)
{
	char *h = md(s);
	int ok = strstr(h, want) != NULL;

	if (!ok)
		fprintf(stderr, "  no '%s' in '%s'\n", want, h);
	free(h);
	return ok;
}

static int
lacks(const char *s, const char *bad)
{
	char *h = md(s);
	int ok = strstr(h, bad) == NULL;

	if (!ok)
		fprintf(stderr, "  '%s' in '%s'\n", bad, h);
	free(h);
	return ok;
}

static void
test_blocks(void)
{
	char *h = md("# Title\n\n## Sub *em*\n\npara **bold**\n");

	CHECK_EQ_STR(h, "<h1>Title</h1>\n<h2>Sub <em>em</em></h2>\n"
	    "<p>para <strong>bold</strong></p>\n");
	free(h);
	h = md("```c\nint x = a < b && c > d;\n```\n");
	CHECK_EQ_STR(h, "<pre><code class=\"language-c\">"
	    "int x = a &lt; b &amp;&amp; c &gt; d;\n</code></pre>\n");
	free(h);
	h = md("- one\n- two\n\n3. three\n4. four\n");
	CHECK_EQ_STR(h, "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"
	    "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n");
	free(h);
	h = md("");
	CHECK_EQ_STR(h, "");
	free(h);
	CHECK(has("> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>"));
	CHECK(has("a `<b>code</b>` span",
	    "<code>&lt;b&gt;code&lt;/b&gt;</code>"));
	CHECK(has("    indented <x>", "<pre><code>indented &lt;x&gt;"));
}

static void
test_links(void)
{
	char *h = md("see [the docs](https://example.org/a?b=1&c=\"2\")");

	CHECK_EQ_STR(h, "<p>see " SAFE_A "https://example.org/a?b=1&amp;c=%22"
	    "2%22\">the docs</a></p>\n");
	free(h);
	CHECK(has("<https://x.org/>", SAFE_A "https://x.org/\">"));
	CHECK(has("[m](mailto:a@b.c)", SAFE_A "mailto:a@b.c\">m</a>"));
	CHECK(has("[rel](notes/a.md)", SAFE_A "notes/a.md\">rel</a>"));
	CHECK(has("[H](HTTP://X.ORG)", SAFE_A "HTTP://X.ORG\">H</a>"));
	/* Every <a of the output opens apart. */
	CHECK(lacks("[a](http://a) and [b](http://b) <http://c>",
	    "<a href="));
	/* Schemes that run or embed: the text stays, the link goes. */
	h = md("[x](javascript:alert(1))");
	CHECK_EQ_STR(h, "<p>x</p>\n");
	free(h);
	CHECK(lacks("[x](JaVaScRiPt:alert(1))", "<a"));
	CHECK(lacks("[x](data:text/html;base64,PHNjcmlwdD4=)", "<a"));
	CHECK(lacks("[x](data:image/png;base64,AAAA)", "<a"));
	CHECK(lacks("[x](vbscript:msgbox)", "<a"));
	CHECK(lacks("[x](file:///etc/passwd)", "<a"));
	CHECK(lacks("<javascript:alert(1)>", "<a"));
	CHECK(lacks("[**bold** x](javascript:alert(1))", "javascript"));
	CHECK(has("[**bold** x](javascript:alert(1))",
	    "<p><strong>bold</strong> x</p>"));
	/* A text that only looks like a link tag stays text. */
	CHECK(has("`<a href=\"x\">`", "&lt;a href=&quot;x&quot;&gt;"));
}

static void
test_images(void)
{
	char *h = md("![a cat](http://evil.example/x.png)");

	CHECK_EQ_STR(h, "<p>" SAFE_A "http://evil.example/x.png\">a cat</a>"
	    "</p>\n");
	free(h);
	h = md("![](https://e.example/y.png)");
	CHECK_EQ_STR(h, "<p>" SAFE_A "https://e.example/y.png\">"
	    "https://e.example/y.png</a></p>\n");
	free(h);
	CHECK(lacks("![i](data:image/png;base64,AAAA)", "<img"));
	CHECK(lacks("![i](data:image/png;base64,AAAA)", "data:"));
	CHECK(lacks("![i](javascript:alert(1))", "<a"));
	/* An image inside a link: both links, nothing loaded. */
	CHECK(lacks("[![i](http://e/x.png)](http://e/)", "<img"));
	CHECK(lacks("![i](x.png \"t\") and ![j][r]\n\n[r]: http://e/j.png",
	    "<img"));
}

static void
test_raw_html(void)
{
	char *h = md("<script>alert(1)</script>");

	/* Raw HTML is shown as the text it is, never made elements. */
	CHECK_EQ_STR(h, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n");
	free(h);
	h = md("hi <img src=x onerror=alert(1)> there");
	CHECK_EQ_STR(h, "<p>hi &lt;img src=x onerror=alert(1)&gt; there</p>\n");
	free(h);
	h = md("<div onclick=\"x()\">\n<b>two</b>\n</div>\n\n*a*");
	CHECK_EQ_STR(h, "<p>&lt;div onclick=&quot;x()&quot;&gt;<br />\n"
	    "&lt;b&gt;two&lt;/b&gt;<br />\n&lt;/div&gt;</p>\n"
	    "<p><em>a</em></p>\n");
	free(h);
	CHECK(lacks("<iframe src=\"http://e\"></iframe>", "<iframe"));
	CHECK(lacks("<a href=\"http://e\">y</a>", "<a"));
	CHECK(lacks("x <style>*{}</style>", "<style"));
	CHECK(lacks("<!-- c --> <?php x ?> <![CDATA[x]]>", "<!"));
	CHECK(lacks("<!-- c --> <?php x ?> <![CDATA[x]]>", "<?"));
	CHECK(has("<b>bold</b> words", "&lt;b&gt;bold&lt;/b&gt; words"));
	/* Entities decode to text, which is escaped again. */
	CHECK(has("&lt;script&gt;", "&lt;script&gt;"));
	/* Lines are lines (a chat's), and paragraphs stay paragraphs. */
	CHECK(has("one\ntwo\n\nthree", "<p>one<br />\ntwo</p>\n<p>three</p>"));
}

static void
test_long(void)
{
	size_t n = 48 * 1024;
	char *s = malloc(n + 1), *h;

	/* A message at the body limit, and a pathological nesting. */
	for (size_t i = 0; i < n; i++)
		s[i] = "line of text\n"[i % 13];
	s[n] = '\0';
	h = md(s);
	CHECK(strlen(h) > n);
	free(h);
	memset(s, '[', n);
	h = md(s);
	CHECK(strlen(h) >= n);
	free(h);
	memset(s, '>', n);
	h = md(s);
	CHECK(strstr(h, "<blockquote>") != NULL);
	free(h);
	for (size_t i = 0; i + 1 < n; i += 2)
		memcpy(s + i, "*a", 2);
	h = md(s);
	CHECK(h[0] == '<');
	free(h);
	free(s);
}

static void
test_utf8(void)
{
	char *h = md("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x9a\x80");

	CHECK_EQ_STR(h, "<p>caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
	    "\xf0\x9f\x9a\x80</p>\n");
	free(h);
	/* Invalid bytes become U+FFFD: the HTML is valid UTF-8. */
	h = md("a\xff" "b\xc3(c\xed\xa0\x80");
	CHECK(strstr(h, "a\xef\xbf\xbd" "b") != NULL);
	CHECK(strchr(h, '\xff') == NULL);
	free(h);
	h = markdown_html("a\0b", 3);
	CHECK(h != NULL && strstr(h, "a\xef\xbf\xbd" "b") != NULL);
	free(h);
}

static void
test_json(void)
{
	char *j = markdown_json("{\"id\":\"x\",\"text\":\"*hi* <b>\","
	    "\"ts\":1}", NULL);
	cJSON *o = j != NULL ? cJSON_Parse(j) : NULL;
	const cJSON *html = cJSON_GetObjectItemCaseSensitive(o, "html");

	CHECK(cJSON_IsString(html) &&
	    strcmp(html->valuestring, "<p><em>hi</em> &lt;b&gt;</p>\n") == 0);
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(o, "text")->valuestring,
	    "*hi* <b>");
	cJSON_Delete(o);
	cJSON_free(j);
	j = markdown_json("{\"messages\":[{\"text\":\"# a\"},{\"files\":[]},"
	    "{\"text\":\"b\",\"html\":\"<script>\"}],\"earlier\":null}",
	    "messages");
	o = j != NULL ? cJSON_Parse(j) : NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "messages");
	CHECK_EQ_INT(cJSON_GetArraySize(v), 3);
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 0),
	    "html")->valuestring, "<h1>a</h1>\n");
	CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 1),
	    "html") == NULL);
	/* An "html" already there is replaced, never trusted. */
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(v, 2),
	    "html")->valuestring, "<p>b</p>\n");
	CHECK(cJSON_GetObjectItemCaseSensitive(o, "earlier") != NULL);
	cJSON_Delete(o);
	cJSON_free(j);
	CHECK(markdown_json("not json", NULL) == NULL);
	CHECK(markdown_json("", "messages") == NULL);
}

/* The HTML of s is exactly want. */
static void
is(const char *s, const char *want)
{
	char *h = md(s);

	CHECK_EQ_STR(h, want);
	free(h);
}

static void
test_gfm(void)
{
	/* A pipe table, aligned; a cell's HTML is text. */
	CHECK(has("| a | b |\n|:--|--:|\n| 1 | <i>2</i> |\n", "<table>"));
	CHECK(has("| a | b |\n|:--|--:|\n| 1 | <i>2</i> |\n",
	    "<td align=\"right\">&lt;i&gt;2&lt;/i&gt;</td>"));
	CHECK(lacks("| a | b |\n|:--|--:|\n| 1 | <i>2</i> |\n", "<i>"));
	/* ~~ strikes, one ~ does not (a chat's "~5 min"). */
	is("~~gone~~ and ~5 min", "<p><del>gone</del> and ~5 min</p>\n");
	/* Bare URLs are links, opening apart; javascript: never is. */
	CHECK(has("see https://example.com/x?a=1 now",
	    SAFE_A "https://example.com/x?a=1\">https://example.com/x?a=1</a>"));
	CHECK(has("www.example.com", SAFE_A "http://www.example.com\">"));
	CHECK(lacks("javascript:alert(1)", "<a "));
	/* @name: after a space, punctuation or the start; not in an
	 * address, code, or a trailing dot. */
	is("@bo and (@ana-2.) hi",
	    "<p><span class=\"mention\">@bo</span> and (<span "
	    "class=\"mention\">@ana-2</span>.) hi</p>\n");
	CHECK(lacks("`@bo` x", "mention"));
	CHECK(lacks("mail bo@example.com", "mention"));
	CHECK(lacks("just @ alone", "mention"));
	/* A table's cell takes no span: the name is kept as text. */
	CHECK(has("| @bo hi |\n|---|\n| x |\n", "<th>@bo hi</th>"));
}

static void
test_excerpt(void)
{
	cJSON *marks = cJSON_Parse("[[4,8],[20,24]]");
	cJSON *bad = cJSON_Parse("[[3,1],\"x\",[0,2,9],[-1,2],[2,4]]");
	char *h;

	/* "the **bold** word" marked inside emphasis and across it. */
	h = markdown_excerpt("the word and **some word** end", marks);
	CHECK_EQ_STR(h, "<p>the <mark>word</mark> and <strong>some "
	    "<mark>word</mark></strong> end</p>\n");
	free(h);
	/* A mark inside a link's URL leaves the URL whole. */
	cJSON_Delete(marks);
	marks = cJSON_Parse("[[1,5]]");
	h = markdown_excerpt("[word](http://x.example/word) ok", marks);
	CHECK(h != NULL && strstr(h, "href=\"http://x.example/word\"") != NULL);
	CHECK(h != NULL && strstr(h, "<mark>word</mark></a>") != NULL);
	free(h);
	/* In code: no <mark>, no sentinel left. */
	cJSON_Delete(marks);
	marks = cJSON_Parse("[[1,5]]");
	h = markdown_excerpt("`word` x", marks);
	CHECK_EQ_STR(h, "<p><code>word</code> x</p>\n");
	free(h);
	/* Marks that are not [start, end] pairs are passed over; the
	 * private-use sentinels in a text are not its marks. */
	h = markdown_excerpt("ab\xee\x80\x80" "cd", bad);
	CHECK_EQ_STR(h, "<p>ab<mark>cd</mark></p>\n");
	free(h);
	/* Code points, not bytes: é is one. */
	cJSON_Delete(marks);
	marks = cJSON_Parse("[[2,5]]");
	h = markdown_excerpt("\xc3\xa9 caf\xc3\xa9!", marks);
	CHECK_EQ_STR(h, "<p>\xc3\xa9 <mark>caf</mark>\xc3\xa9!</p>\n");
	free(h);
	cJSON_Delete(marks);
	cJSON_Delete(bad);
	/* markdown_json renders a hit's excerpt beside its text. */
	h = markdown_json("{\"messages\":[{\"text\":\"a *b*\",\"excerpt\":"
	    "\"*b*\",\"marks\":[[1,2]]}]}", "messages");
	CHECK(h != NULL && strstr(h, "\"excerpt_html\":\"<p><em><mark>b"
	    "</mark></em></p>\\n\"") != NULL);
	cJSON_free(h);
}

/* A private message's body (node/wire/private.h), as a daemon that
 * cannot open it renders it: the head line alone, the sealed line being
 * a link reference definition; at its longest too. */
static void
test_private_body(void)
{
	static char text[PRIV_TEXT_MAX];
	struct identity ana, bo;
	struct buf b;
	size_t sizes[] = { 5, PRIV_TEXT_MAX };
	char *h;

	CHECK(sodium_init() >= 0);
	crypto_sign_keypair(ana.pk, ana.sk);
	crypto_sign_keypair(bo.pk, bo.sk);
	memset(text, 'x', sizeof(text));
	for (size_t i = 0; i < 2; i++) {
		buf_init(&b, PAPO_BODY_MAX + 1);
		CHECK_EQ_INT(priv_seal(&b, &ana, bo.pk,
		    (const uint8_t *)"0123456789abcdef", "abcdefghij", text,
		    sizes[i]), PRIV_OK);
		buf_add(&b, "", 1);
		h = md((const char *)b.p);
		CHECK_EQ_STR(h, "<p>" PRIV_HEAD "</p>\n");
		free(h);
		buf_free(&b);
	}
}

int
main(void)
{
	test_private_body();
	test_gfm();
	test_excerpt();
	test_blocks();
	test_links();
	test_images();
	test_raw_html();
	test_long();
	test_utf8();
	test_json();
	return check_exit();
}
