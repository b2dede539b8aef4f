/*
 * cmd_doctor.c: papo doctor (cmd_doctor.h).  It looks at the home's
 * files by their metadata only (of their contents it reads serve.json's
 * pid and addresses, and a room's name and fingerprint), tries to bind
 * the ports papo serve uses to tell whether they are free, finds in
 * /proc who holds a taken one, and asks the running daemon for its rooms
 * and each room's status.  What looks wrong is gathered on the way and
 * listed last, each with what to do.  Main thread of a short-lived
 * process; it changes nothing.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/addr.h"
#include "lib/fs.h"
#include "lib/os.h"
#include "node/node.h"
#include "server/cli/ask.h"
#include "server/cli/client.h"
#include "server/cli/cmd.h"
#include "server/cli/cmd_doctor.h"
#include "server/cli/cmd_version.h"
#include "server/cli/print.h"
#include "server/cli/settings.h"
#include "server/http/http.h"
#include "server/http/http_poll.h"

#define DOCTOR_PROBLEMS_MAX 32
#define DOCTOR_LINE 768
#define DOCTOR_FILES_MAX 64       /* entries listed of one folder */
#define DOCTOR_CLOCK_MS 10000     /* a member's clock this far off */
#define DOCTOR_DISK_MIN (100ull * 1024 * 1024)
#define DOCTOR_SERVE_MAX (64 * 1024)

extern char **environ;

struct doctor {
	const char *home;
	int running;                 /* serve.json names a live daemon */
	int api_down;                /* it did not answer: ask no more */
	struct client cl;
	char quic[ADDR_STRLEN + 8];  /* serve.json's QUIC address */
	size_t nprob;
	char prob[DOCTOR_PROBLEMS_MAX][DOCTOR_LINE];
};

/* Something that looks wrong, and what to do: listed at the end.  Text
 * of the room's (names) may be in it: control characters become '?'. */
static void doctor_problem(struct doctor *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
doctor_problem(struct doctor *d, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (d->nprob == DOCTOR_PROBLEMS_MAX)
		return;
	p = d->prob[d->nprob++];
	va_start(ap, fmt);
	vsnprintf(p, DOCTOR_LINE, fmt, ap);
	va_end(ap);
	for (; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* "Debian GNU/Linux 12 (bookworm)": os-release's PRETTY_NAME. */
static int
doctor_os(char *out, size_t n)
{
	char line[256];
	FILE *f = fopen("/etc/os-release", "r");
	int rc = -1;

	if (f == NULL)
		return -1;
	while (rc == -1 && fgets(line, sizeof(line), f) != NULL) {
		char *v = line + 12, *e;

		if (strncmp(line, "PRETTY_NAME=", 12) != 0)
			continue;
		if (*v == '"')
			v++;
		if ((e = strpbrk(v, "\"\n")) != NULL)
			*e = '\0';
		snprintf(out, n, "%s", v);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* The version, the protocols and the libraries as papo version prints
 * them, the system, and the platform layer this build took (the
 * portable one holds fewer HTTP connections). */
static void
doctor_version(void)
{
	struct utsname u;
	char os[256];

	printf("version       ");
	cmd_version_print(stdout);
	printf("system       ");
	if (uname(&u) == 0)
		printf(" %s %s %s", u.sysname, u.release, u.machine);
	if (doctor_os(os, sizeof(os)) == 0) {
		printf(", ");
		cli_put(os);
	}
	printf("\n");
	printf("platform      %s loop; HTTP in %s mode, at most %u "
	    "connections; UDP %s\n", os_backend, http_poll_mode,
	    http_poll_conn_max, os_has_df ? "with DF (path MTU probed)" :
	    "with no DF (a router that fragments hides a path's MTU)");
}

/* The settings whose values are no secret; any other PAPO_ variable
 * (the token, the invite, the relay's secret or password, one not
 * known here) is said to be set, never shown. */
static const char *const doctor_shown[] = {
	"PAPO_HOME", "PAPO_HTTP", "PAPO_LISTEN", "PAPO_ADVERTISE", "PAPO_TURN",
	"PAPO_TURN_USER", "PAPO_TURN_SHARE", "PAPO_LAN", "PAPO_PORTMAP",
	"PAPO_LOG", "PAPO_KEEP", "PAPO_RATE", "PAPO_DAMP", "PAPO_FILES_AUTO",
	"PAPO_FILES_QUOTA", "PAPO_OAUTH", "PAPO_PUBLIC_URL", "PAPO_TLS",
	"PAPO_TLS_CERT", "PAPO_TLS_KEY", "PAPO_NAME", "PAPO_ROOM",
	"PAPO_MCP_IDLE", "PAPO_CORS_ORIGINS",
};

static int
doctor_is_shown(const char *var, size_t len)
{
	for (size_t i = 0; i < sizeof(doctor_shown) / sizeof(doctor_shown[0]);
	    i++)
		if (strlen(doctor_shown[i]) == len &&
		    strncmp(doctor_shown[i], var, len) == 0)
			return 1;
	return 0;
}

/*
 * Prints a setting's value with the password of a URL in it masked:
 * "https://user:****@host/" (PAPO_PUBLIC_URL, PAPO_TURN), and a user
 * part alone, which may be a token, as "****@host".
 */
static void
doctor_put_masked(const char *v)
{
	char out[2048];
	const char *start = strstr(v, "://"), *at, *colon, *end;

	start = start != NULL ? start + 3 : strncmp(v, "turn:", 5) == 0 ?
	    v + 5 : strncmp(v, "turns:", 6) == 0 ? v + 6 : v;
	end = start + strcspn(start, "/?#");
	at = memchr(start, '@', (size_t)(end - start));
	if (at == NULL || strlen(v) >= sizeof(out)) {
		cli_put(v);
		return;
	}
	/* The last '@' before the path ends the user part. */
	while (memchr(at + 1, '@', (size_t)(end - at - 1)) != NULL)
		at = memchr(at + 1, '@', (size_t)(end - at - 1));
	colon = memchr(start, ':', (size_t)(at - start));
	snprintf(out, sizeof(out), "%.*s****%s", (int)((colon != NULL ?
	    colon + 1 : start) - v), v, at);
	cli_put(out);
}

static void
doctor_settings(void)
{
	int any = 0;

	for (char **e = environ; *e != NULL; e++) {
		const char *eq = strchr(*e, '=');

		if (strncmp(*e, "PAPO_", 5) != 0 || eq == NULL)
			continue;
		printf("%s", any++ ? "             " : "settings     ");
		printf(" %.*s=", (int)(eq - *e), *e);
		if (doctor_is_shown(*e, (size_t)(eq - *e)))
			doctor_put_masked(eq + 1);
		else
			printf("(set, not shown)");
		printf("\n");
	}
	if (!any)
		printf("settings      none in the environment (the "
		    "defaults)\n");
}

/* What a file of the home holds that others must not read, or NULL
 * for the room's other state (its log, members, index). */
static const char *
doctor_secret(const char *name)
{
	static const char *const files[][2] = {
		{ "identity", "this member's private key" },
		{ "room.json", "the room's key" },
		{ "epochs.json", "the room's key epochs" },
		{ "serve.json", "the room's invite" },
		{ "oauth.json", "the OAuth grants" },
		{ "tls-key.pem", "the HTTPS key" },
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(name, files[i][0]) == 0)
			return files[i][1];
	return NULL;
}

/* Whether the file at path (shown as rel) is only its owner's, and
 * that owner us; each way it is not is a problem. */
static void
doctor_mode(struct doctor *d, const char *path, const char *name,
    const struct stat *st)
{
	const char *what = doctor_secret(name);
	unsigned mode = (unsigned)(st->st_mode & 07777);
	int dir = S_ISDIR(st->st_mode);

	if ((mode & 077) != 0)
		doctor_problem(d, "%s %s%s and others can %s it (mode %04o): "
		    "chmod %s %s", path, what != NULL ? "holds " : "is ",
		    what != NULL ? what : dir ? "a folder of papo's" :
		    "papo's state", (mode & 044) != 0 ? "read" : "change",
		    mode, dir ? "700" : "600", path);
	if (st->st_uid != geteuid())
		doctor_problem(d, "%s belongs to uid %u, not to you (uid %u): "
		    "run papo as its owner, or chown it", path,
		    (unsigned)st->st_uid, (unsigned)geteuid());
}

static int
doctor_visible(const struct dirent *de)
{
	return strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
}

/* Lists the entries of dir (shown under the prefix rel), each with its
 * mode and size, and checks their modes; not into folders. */
static void
doctor_dir(struct doctor *d, const char *dir, const char *rel)
{
	struct dirent **list = NULL;
	char path[4096], shown[512];
	struct stat st;
	int n;

	if ((n = scandir(dir, &list, doctor_visible, alphasort)) == -1) {
		doctor_problem(d, "cannot list %s (%s): check its permissions",
		    dir, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		    sizeof(path) || stat(path, &st) == -1)
			continue;
		snprintf(shown, sizeof(shown), "%s%s%s", rel, name,
		    S_ISDIR(st.st_mode) ? "/" : "");
		if (i < DOCTOR_FILES_MAX) {
			printf("  ");
			cli_put(shown);
			printf("%*s %04o", 28 - (int)strlen(shown) > 0 ?
			    28 - (int)strlen(shown) : 1, "",
			    (unsigned)(st.st_mode & 07777));
			if (!S_ISDIR(st.st_mode))
				printf(" %12lld bytes", (long long)st.st_size);
			printf("\n");
		}
		doctor_mode(d, path, name, &st);
	}
	if (n > DOCTOR_FILES_MAX)
		printf("  ... and %d more in %s\n", n - DOCTOR_FILES_MAX, dir);
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* The free space on the home's file system. */
static void
doctor_disk(struct doctor *d)
{
	struct statvfs vs;
	unsigned long long avail;
	char size[32];

	if (statvfs(d->home, &vs) == -1)
		return;
	avail = (unsigned long long)vs.f_bavail * vs.f_frsize;
	cli_size((double)avail, size);
	printf("disk          %s free on the home's file system\n", size);
	if (avail < DOCTOR_DISK_MIN)
		doctor_problem(d, "only %s free where %s is: papo cannot store "
		    "messages once it is full; free some space", size, d->home);
}

/* The home, its files and those of each room in rooms/.  -1 when there
 * is no home to look at. */
static int
doctor_home(struct doctor *d)
{
	char path[4096];
	struct dirent **list = NULL;
	struct stat st;
	int n;

	if (stat(d->home, &st) == -1 || !S_ISDIR(st.st_mode)) {
		printf("home          %s: %s\n", d->home, access(d->home, F_OK)
		    == -1 ? strerror(errno) : "not a folder");
		doctor_problem(d, "%s is no papo home yet: 'papo new --name "
		    "NAME' makes a room there, 'papo join INVITE --name NAME' "
		    "joins one (PAPO_HOME chooses another folder)", d->home);
		return -1;
	}
	printf("home          %s (%s), mode %04o\n", d->home,
	    getenv("PAPO_HOME") != NULL && getenv("PAPO_HOME")[0] != '\0' ?
	    "PAPO_HOME" : "the default", (unsigned)(st.st_mode & 07777));
	doctor_mode(d, d->home, "", &st);
	doctor_dir(d, d->home, "");
	snprintf(path, sizeof(path), "%s/rooms", d->home);
	if ((n = scandir(path, &list, doctor_visible, alphasort)) > 0) {
		for (int i = 0; i < n; i++) {
			char sub[4096], rel[300];

			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    list[i]->d_name) < sizeof(sub) &&
			    stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
				snprintf(rel, sizeof(rel), "rooms/%s/",
				    list[i]->d_name);
				printf("  %s %04o\n", rel,
				    (unsigned)(st.st_mode & 07777));
				doctor_mode(d, sub, "", &st);
				doctor_dir(d, sub, rel);
			}
			free(list[i]);
		}
		free(list);
	}
	doctor_disk(d);
	return 0;
}

/* serve.json's pid and QUIC address (d->quic), read whatever its pid;
 * its invite is left alone.  -1 when there is none to read. */
static int
doctor_serve_json(struct doctor *d, long *pid)
{
	char err[PAPO_ERR_LEN], path[4096];
	const cJSON *v;
	char *data = NULL;
	size_t len = 0;
	cJSON *o;
	int exists;

	*pid = 0;
	if (fs_path(path, sizeof(path), d->home, "serve.json") == -1 ||
	    fs_read(err, path, DOCTOR_SERVE_MAX, &data, &len, &exists) == -1)
		return -1;
	o = cJSON_Parse(data);
	/* It holds the invite: gone from memory before anything else. */
	explicit_bzero(data, len);
	free(data);
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "pid")) != NULL &&
	    cJSON_IsNumber(v))
		*pid = (long)v->valuedouble;
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "quic")) != NULL &&
	    cJSON_IsString(v))
		snprintf(d->quic, sizeof(d->quic), "%s", v->valuestring);
	cJSON_Delete(o);
	return 0;
}

/* Whether papo serve runs on the home (serve.json and its pid). */
static void
doctor_daemon(struct doctor *d)
{
	char err[PAPO_ERR_LEN];
	long pid;
	int have = doctor_serve_json(d, &pid) == 0;

	if (client_open(err, d->home, &d->cl) == 0) {
		d->running = 1;
		printf("daemon        running, pid %ld, at %s\n", d->cl.pid,
		    d->cl.url);
		return;
	}
	printf("daemon        not running: %s\n", err);
	if (strstr(err, "damaged") != NULL || strstr(err, "cannot read") !=
	    NULL || strstr(err, "no room yet") != NULL)
		doctor_problem(d, "%s", err);
	else if (have && pid > 0)
		printf("              (serve.json is left from pid %ld, which "
		    "stopped without its clean stop; papo serve replaces it)\n",
		    pid);
	d->quic[0] = '\0';
}

/* Binds a socket of type to a, and closes it: 0 when it could, else
 * the errno.  TCP with SO_REUSEADDR, as papo serve's HTTP (http.c):
 * connections of a daemon gone, in TIME_WAIT, do not hold the port. */
static int
doctor_bind(const struct addr *a, int type)
{
	struct sockaddr_storage ss;
	unsigned len = addr_to_sockaddr(a, a->family == 6 ? AF_INET6 : AF_INET,
	    &ss);
	int fd = os_socket(ss.ss_family, type, 0, 0), e = 0, one = 1;

	if (fd == -1)
		return errno;
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1)
		e = errno;
	close(fd);
	return e;
}

/* One port papo serve binds: what (HTTP or QUIC), its address text, the
 * setting that chooses it.  Free, held by this daemon, or taken. */
static void
doctor_port(struct doctor *d, const char *what, const char *text,
    const char *setting)
{
	int tcp = strcmp(what, "HTTP") == 0;
	char comm[64], by[128];
	struct addr_bind b;
	struct addr a;
	long pid;
	int e;

	printf("  %-4s %s/%s: ", what, text, tcp ? "tcp" : "udp");
	/* Read as papo serve reads it. */
	if (addr_bind(text, tcp ? HTTP_BIND_FLAGS : ADDR_BIND_ANY_PORT, &b) !=
	    ADDR_OK) {
		printf("not an IP address and port, not checked\n");
		return;
	}
	a = b.a;
	if (a.port == 0) {
		printf("port 0, any free port\n");
		return;
	}
	if ((e = doctor_bind(&a, tcp ? SOCK_STREAM : SOCK_DGRAM)) == 0) {
		printf("free%s\n", d->running ? " (this daemon does not hold "
		    "it?)" : "");
		return;
	}
	pid = os_port_holder(tcp, a.port, comm, sizeof(comm));
	if (e == EADDRINUSE && d->running && (pid == d->cl.pid || pid == 0)) {
		printf("held by this daemon (pid %ld)\n", d->cl.pid);
		return;
	}
	if (e == EADDRINUSE) {
		if (pid != 0)
			snprintf(by, sizeof(by), "pid %ld (%s)", pid, comm);
		else
			snprintf(by, sizeof(by), "a program of another user");
		printf("taken by ");
		cli_put(by);
		printf("\n");
		doctor_problem(d, "%s port %u is taken by %s: papo serve "
		    "cannot start on %s; stop that program, or set %s to "
		    "another port (0 picks a free one)", what, (unsigned)a.port,
		    by, text, setting);
		return;
	}
	printf("%s\n", strerror(e));
	if (e == EADDRNOTAVAIL)
		doctor_problem(d, "%s address %s is not one of this machine's: "
		    "set %s to one of its addresses, or 0.0.0.0", what, text,
		    setting);
	else if (e == EACCES)
		doctor_problem(d, "%s port %u is below 1024, which needs root: "
		    "set %s to a port above 1023", what, (unsigned)a.port,
		    setting);
}

/* The ports: the running daemon's (serve.json), else those papo serve
 * would take with the settings of this environment. */
static void
doctor_ports(struct doctor *d)
{
	char err[PAPO_ERR_LEN];
	struct serve_config sc;
	struct http_config hc;
	const char *http;

	printf("ports\n");
	if (d->running) {
		http = strstr(d->cl.url, "://");
		doctor_port(d, "HTTP", http != NULL ? http + 3 : d->cl.url,
		    "PAPO_HTTP (--http)");
		if (d->quic[0] != '\0')
			doctor_port(d, "QUIC", d->quic,
			    "PAPO_LISTEN (--listen)");
		return;
	}
	memset(&sc, 0, sizeof(sc));
	memset(&hc, 0, sizeof(hc));
	/* papo serve's own checks, before it binds anything. */
	if (settings_load(err, &sc, NULL, 0) == 0) {
		hc.bind = sc.http;
		hc.token = sc.token;
		hc.public_url = sc.public_url;
		hc.cors = sc.cors;
	}
	if (hc.bind == NULL || http_check(err, &hc) == -1) {
		printf("  not checked: %s\n", err);
		doctor_problem(d, "papo serve would refuse to start: %s", err);
		return;
	}
	doctor_port(d, "HTTP", sc.http, "PAPO_HTTP (--http)");
	doctor_port(d, "QUIC", sc.node.listen, "PAPO_LISTEN (--listen)");
}

/* GET path of the running daemon: its JSON, or NULL with the reason
 * noted (after which nothing more is asked). */
static cJSON *
doctor_get(struct doctor *d, const char *path)
{
	char err[PAPO_ERR_LEN];
	char *text = NULL;
	long status = 0;
	cJSON *o = NULL;

	if (!d->running || d->api_down)
		return NULL;
	if (client_call(err, &d->cl, path, NULL, &status, &text) == -1) {
		d->api_down = 1;
		doctor_problem(d, "papo serve (pid %ld) did not answer: %s; "
		    "its log (serve.log, the journal or docker logs) may say "
		    "why", d->cl.pid, err);
		return NULL;
	}
	if (status == 401 || status == 403) {
		d->api_down = 1;
		doctor_problem(d, "papo serve wants its token: run papo doctor "
		    "with PAPO_TOKEN set to see the daemon's side");
	} else if (status != 200) {
		d->api_down = 1;
		doctor_problem(d, "papo serve answered %s with HTTP %ld", path,
		    status);
	} else
		o = cJSON_Parse(text);
	free(text);
	return o;
}

/* Whether every address of the array is a loopback one. */
static int
doctor_loopback_only(const cJSON *addrs)
{
	const cJSON *a;
	struct addr x;

	cJSON_ArrayForEach(a, addrs)
		if (!cJSON_IsString(a) ||
		    addr_parse(a->valuestring, &x) == -1 ||
		    !addr_is_loopback(&x))
			return 0;
	return cJSON_GetArraySize(addrs) > 0;
}

/* "state by METHOD at ADDR (REASON)" of a port mapping or relay. */
static void
doctor_state(const cJSON *o, const char *by, const char *at,
    const char *on)
{
	const char *s;

	cli_put((s = cli_str(o, "state")) != NULL ? s : "?");
	if (by != NULL && (s = cli_str(o, by)) != NULL)
		printf(" by %s", s);
	if ((s = cli_str(o, at)) != NULL)
		printf(" at %s", s);
	if (on != NULL && (s = cli_str(o, on)) != NULL) {
		printf(" on ");
		doctor_put_masked(s);
	}
	if ((s = cli_str(o, "from")) != NULL && strcmp(s, "invite") == 0)
		printf(" (from the invite)");
	if ((s = cli_str(o, "reason")) != NULL) {
		printf(" (");
		cli_put(s);
		printf(")");
	}
	printf("\n");
}

/* How this daemon is reached, from a room's status (they share it). */
static void
doctor_reach(struct doctor *d, const cJSON *st)
{
	const cJSON *me = cJSON_GetObjectItemCaseSensitive(st, "me");
	const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(me, "addrs");
	const cJSON *turn = cJSON_GetObjectItemCaseSensitive(me, "turn");
	const cJSON *a;
	const char *nat = cli_str(me, "nat"), *obs = cli_str(me, "observed");
	const char *ts = cli_str(turn, "state");

	printf("reached at   ");
	cJSON_ArrayForEach(a, addrs)
		if (cJSON_IsString(a))
			printf(" %s", a->valuestring);
	printf("%s\n", cJSON_GetArraySize(addrs) == 0 ? " nowhere yet" : "");
	/* Loopback only is right for agents of one machine: said, not
	 * counted as wrong. */
	if (cJSON_GetArraySize(addrs) == 0)
		doctor_problem(d, "this member tells the others no address "
		    "to reach it at: listen on an interface's address "
		    "(PAPO_LISTEN=0.0.0.0:7778) or name one (PAPO_ADVERTISE)");
	else if (doctor_loopback_only(addrs))
		printf("              (loopback only: members on other "
		    "machines cannot reach this one; PAPO_LISTEN=0.0.0.0:7778 "
		    "lets them)\n");
	printf("NAT           %s", nat != NULL ? nat : "?");
	if (obs != NULL)
		printf(", seen from outside at %s\n", obs);
	else
		printf(" (no member has said yet where it sees this one)\n");
	printf("port mapping  ");
	doctor_state(cJSON_GetObjectItemCaseSensitive(me, "portmap"), "method",
	    "external", NULL);
	printf("relay         ");
	doctor_state(turn, NULL, "relayed", "server");
	if (nat != NULL && strcmp(nat, "symmetric") == 0 && ts != NULL &&
	    strcmp(ts, "off") == 0)
		doctor_problem(d, "behind a symmetric NAT with no TURN relay: "
		    "members behind NATs of their own may never reach this "
		    "one; set PAPO_TURN and its secret (docs/REACHABILITY.md, "
		    "\"The relay\")");
	if (ts != NULL && strcmp(ts, "failed") == 0)
		doctor_problem(d, "the TURN relay failed (%s): check PAPO_TURN "
		    "and its credentials (docker/README.md, \"Credentials\")",
		    cli_str(turn, "reason") != NULL ? cli_str(turn, "reason") :
		    "no reason given");
}

/* Each member of a room's status: online, path, and its clock less
 * ours. */
static void
doctor_members(struct doctor *d, const cJSON *st, const char *room)
{
	const cJSON *m, *v;
	const char *s;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(st, "members")) {
		const char *name = cli_str(m, "name");

		printf("    ");
		cli_put(name != NULL ? name : "?");
		printf("  %s", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m,
		    "online")) ? "online" : "offline");
		if ((s = cli_str(m, "path")) != NULL) {
			printf("  path: ");
			cli_put(s);
		}
		if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(m,
		    "rtt_ms")))
			printf(", %.1f ms", v->valuedouble);
		if (!cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(m,
		    "clock_offset_ms"))) {
			printf("  clock: not measured yet\n");
			continue;
		}
		printf("  clock: %+.0f ms\n", v->valuedouble);
		if (v->valuedouble > DOCTOR_CLOCK_MS ||
		    v->valuedouble < -DOCTOR_CLOCK_MS)
			doctor_problem(d, "%s's clock (room %s) is %.0f s %s "
			    "this machine's: set both right (timedatectl "
			    "set-ntp true, or chrony); presence, history's "
			    "order and the relay's credentials need clocks "
			    "within seconds",
			    name != NULL ? name : "?", room,
			    (v->valuedouble < 0 ? -v->valuedouble :
			    v->valuedouble) / 1000, v->valuedouble > 0 ?
			    "ahead of" : "behind");
	}
	v = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(st, "me"), "removed");
	if (cJSON_IsObject(v))
		doctor_problem(d, "this member was removed from room %s by %s: "
		    "its invite no longer works; ask a member for a new one",
		    room, (s = cli_str(v, "by")) != NULL ? s : "?");
}

/* The running daemon: how it is reached, its rooms and their members. */
static void
doctor_rooms(struct doctor *d)
{
	const cJSON *r, *v;
	cJSON *rooms, *st;
	char path[512];
	double nm, on;

	if ((st = doctor_get(d, "/api/status")) != NULL)
		doctor_reach(d, st);
	cJSON_Delete(st);
	if ((rooms = doctor_get(d, "/api/rooms")) == NULL)
		return;
	v = cJSON_GetObjectItemCaseSensitive(rooms, "rooms");
	printf("rooms         %d\n", cJSON_GetArraySize(v));
	cJSON_ArrayForEach(r, v) {
		const char *name = cli_str(r, "name"), *id = cli_str(r, "id");

		printf("  ");
		cli_put(name != NULL ? name : "?");
		printf(" (%.8s) as ", id != NULL ? id : "?");
		cli_put(cli_str(r, "me") != NULL ? cli_str(r, "me") : "?");
		nm = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r,
		    "members"));
		on = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r,
		    "online"));
		printf(", %.0f member%s, %.0f online%s\n", nm, nm == 1 ? "" :
		    "s", on, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
		    "default")) ? ", the default" : "");
		if (id == NULL || cli_room_path(path, sizeof(path),
		    "/api/status", id) == -1 ||
		    (st = doctor_get(d, path)) == NULL)
			continue;
		doctor_members(d, st, name != NULL ? name : id);
		cJSON_Delete(st);
	}
	cJSON_Delete(rooms);
}

/* One room's folder with no daemon: its name and fingerprint. */
static int
doctor_room_disk(const char *dir, const char *where)
{
	char err[PAPO_ERR_LEN], name[PAPO_NAME_MAX + 1], fpr[PAPO_FPR_LEN + 1];

	if (home_describe(err, dir, name, fpr) == -1)
		return 0;
	printf("  ");
	cli_put(name);
	printf(" (fingerprint %s), %s\n", fpr, where);
	return 1;
}

/* The rooms of the home, with no daemon to ask. */
static void
doctor_rooms_disk(struct doctor *d)
{
	char path[4096], sub[4096];
	struct dirent **list = NULL;
	int n, found;

	printf("rooms         (from the home's files; papo serve tells "
	    "more)\n");
	found = doctor_room_disk(d->home, "the home's first room");
	snprintf(path, sizeof(path), "%s/rooms", d->home);
	if ((n = scandir(path, &list, doctor_visible, alphasort)) > 0) {
		for (int i = 0; i < n; i++) {
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path,
			    list[i]->d_name) < sizeof(sub))
				found += doctor_room_disk(sub, "in rooms/");
			free(list[i]);
		}
		free(list);
	}
	if (found == 0)
		printf("  none\n");
}

/* What looks wrong, numbered, or that nothing does. */
static int
doctor_verdict(const struct doctor *d)
{
	if (d->nprob == 0) {
		printf("\nnothing looks wrong\n");
		return CLI_OK;
	}
	printf("\nwhat looks wrong (%zu):\n", d->nprob);
	for (size_t i = 0; i < d->nprob; i++)
		printf("  %zu. %s\n", i + 1, d->prob[i]);
	fprintf(stderr, "papo: doctor found %zu thing%s wrong (listed "
	    "above)\n", d->nprob, d->nprob == 1 ? "" : "s");
	return CLI_ERROR;
}

int
cli_doctor(const struct cli_cmd *c, int argc, char **argv)
{
	struct cli_opts o;
	struct doctor *d;
	int rc;

	if (cli_start(c, argc, argv, &o, 0, &rc) == -1)
		return rc;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return cli_fail("out of memory");
	d->home = o.home;
	printf("papo doctor: paste all of this into a bug report (it holds no "
	    "key, invite or token)\n\n");
	doctor_version();
	doctor_settings();
	if (doctor_home(d) == 0)
		doctor_daemon(d);
	doctor_ports(d);
	if (d->running)
		doctor_rooms(d);
	else
		doctor_rooms_disk(d);
	rc = doctor_verdict(d);
	client_close(&d->cl);
	free(d);
	return rc;
}
