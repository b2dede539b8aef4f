/*
 * cmd_version.c: papo version and papo --version (cmd_version.h).  The
 * version is CMakeLists.txt's project() version (PAPO_VERSION, passed
 * by the build); the protocol versions and the node's libraries are
 * node/'s to say (node_versions); the libraries only server/ links are
 * asked here.  Every library's version is read from it at run time,
 * which is the one a bug report needs: a package built against one
 * release runs with whatever release the machine has.  Main thread;
 * prints to stdout only, opens nothing.
 */
#include <stdio.h>

#include <cjson/cJSON.h>
#include <cmark-gfm.h>
#include <curl/curl.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <sodium.h>

#include "node/node.h"
#include "server/cli/cmd_version.h"

static void
version_lib(FILE *f, const char *name, const char *version, const char *note)
{
	fprintf(f, "  %-14s %s", name, version != NULL ? version : "?");
	if (note != NULL)
		fprintf(f, " (%s)", note);
	fputc('\n', f);
}

void
cmd_version_print(FILE *f)
{
	const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
	struct node_versions v;

	node_versions(&v);
	fprintf(f, "papo %s\n", PAPO_VERSION);
	fprintf(f, "protocols:");
	for (unsigned p = v.proto_newest; p >= v.proto_oldest && p > 0; p--)
		fprintf(f, " papo/%u", p);
	fprintf(f, " (QUIC ALPN, newest first)\n");
	fprintf(f, "invites: %s..., versions %u to %u\n", v.invite_prefix,
	    v.invite_oldest, v.invite_newest);
	fprintf(f, "libraries (as running):\n");
	version_lib(f, "libsodium", sodium_version_string(), NULL);
	version_lib(f, "GnuTLS", gnutls_check_version(NULL), NULL);
	for (size_t i = 0; i < v.nlibs; i++)
		version_lib(f, v.libs[i].name, v.libs[i].version,
		    v.libs[i].note);
	version_lib(f, "libmicrohttpd", MHD_get_version(), NULL);
	version_lib(f, "libcurl", curl != NULL ? curl->version : NULL,
	    curl != NULL ? curl->ssl_version : NULL);
	version_lib(f, "cJSON", cJSON_Version(), NULL);
	version_lib(f, "cmark-gfm", cmark_version_string(), NULL);
}

int
cli_version(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	cmd_version_print(stdout);
	return CLI_OK;
}
