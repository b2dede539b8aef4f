/*
 * print.c: what commands print of the daemon's answers (print.h), with
 * text from other members' control characters replaced; sizes and the
 * files a message names.  Main thread.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "server/cli/print.h"

void
cli_put_in(const char *s, const char *indent)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (*p == '\n' && indent != NULL)
			printf("\n%s", indent);
		else if (*p == '\n')
			fputs("\xe2\x8f\x8e", stdout);    /* U+23CE */
		else if (*p == '\t')
			putchar(' ');
		else if (*p < 0x20 || *p == 0x7f)
			putchar('?');
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			putchar('?');
			p++;
		} else
			putchar(*p);
	}
}

void
cli_put(const char *s)
{
	cli_put_in(s, NULL);
}

const char *
cli_str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void
cli_time(double ms, char out[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || localtime_r(&t, &tm) == NULL ||
	    strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(out, 32, "never");
}

void
cli_names(const cJSON *arr)
{
	const cJSON *v;
	int first = 1;

	cJSON_ArrayForEach(v, arr) {
		if (!cJSON_IsString(v))
			continue;
		printf("%s", first ? "" : ", ");
		cli_put(v->valuestring);
		first = 0;
	}
}

/* A size for people: "512 bytes", "300.0 KiB", "5.0 MiB", "1.2 GiB". */
void
cli_size(double n, char out[32])
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	int u = -1;

	if (n < 1024) {
		snprintf(out, 32, "%.0f bytes", n);
		return;
	}
	while (n >= 1024 && u < 3) {
		n /= 1024;
		u++;
	}
	snprintf(out, 32, "%.1f %s", n, units[u]);
}

void
cli_files(const cJSON *files, const char *indent)
{
	const cJSON *f, *size;
	const char *s;
	char sz[32];

	cJSON_ArrayForEach(f, files) {
		size = cJSON_GetObjectItemCaseSensitive(f, "size");
		printf("%s\xf0\x9f\x93\x8e ", indent);     /* U+1F4CE */
		cli_put((s = cli_str(f, "name")) != NULL ? s : "?");
		cli_size(cJSON_IsNumber(size) ? size->valuedouble : 0, sz);
		printf(" (%s", sz);
		s = cli_str(f, "state");
		if (s != NULL && strcmp(s, "here") != 0) {
			printf(", ");
			cli_put(s);
		}
		printf(") ");
		cli_put((s = cli_str(f, "ref")) != NULL ? s : "?");
		printf("\n");
	}
}

void
cli_message_head(const cJSON *m)
{
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(m, "ts");
	const char *s;
	char when[32];

	cli_time(cJSON_IsNumber(ts) ? ts->valuedouble : 0, when);
	printf("%s ", when);
	cli_put((s = cli_str(m, "id")) != NULL ? s : "?");
	printf(" ");
	if ((s = cli_str(m, "from_label")) == NULL)
		s = cli_str(m, "from");
	cli_put(s != NULL ? s : "?");
	if ((s = cli_str(m, "to")) != NULL) {
		printf(" \xe2\x86\x92 ");          /* → */
		cli_put(s);
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "private")))
			printf(" (private)");
	}
	if ((s = cli_str(m, "reply_to")) != NULL) {
		printf(" \xe2\x86\xb3 ");          /* ↳ */
		cli_put(s);
	}
	printf(": ");
}
