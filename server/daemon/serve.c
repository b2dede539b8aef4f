/*
 * serve.c: "papo serve", the daemon.  It owns the order things start in
 * (the HTTP settings check, the lock, the TLS certificate, the room,
 * signals, the node thread, HTTP, serve.json) and stop in (the node,
 * which says bye; HTTP; the certificate; serve.json; the lock), and the
 * main thread's loop between the two, which carries MHD's events, the
 * node's answers and events, and SIGINT/SIGTERM (stop) and SIGHUP
 * (certificate reload) read from a signalfd.  It runs on the main
 * thread; once the loop runs, nothing here may block, since every HTTP
 * client and every answer of the node waits on this one thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/addr.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "node/node.h"
#include "server/api/api.h"
#include "server/api/sse.h"
#include "server/api/web.h"
#include "server/daemon/serve.h"
#include "server/http/http.h"
#include "server/http/tls.h"
#include "server/mcp/mcp.h"
#include "server/oauth/oauth.h"

#define SERVE_PATH_MAX 4096
#define SERVE_RELAY_WAIT_NS (3 * NS_PER_S)

/* Everything the daemon holds; built by serve_run, passed to its
 * callbacks. */
struct papo {
	const struct serve_config *cfg;
	struct loop *loop;
	struct node *node;
	struct http *http;
	struct sse *sse;
	struct mcp *mcp;
	struct oauth *oauth;
	struct tls *tls;         /* NULL: plain HTTP */
	int lockfd;
	struct os_signals *sigs;
	int json_written;
	char *invite;            /* the newest, as serve.json has it */
	struct loop_timer *banner; /* the wait for the relay (serve_banner) */
	int banner_shown;
	int first;               /* this start made or joined the room */
	char room[PAPO_NAME_MAX + 1];
	char fpr[PAPO_FPR_LEN + 1]; /* home_describe's, for the logs */
	char *rooms;             /* the banner's lines of the rooms held,
	                          * malloc'd (serve_room_lines), or NULL */
	char quic[128];
	char refused[PAPO_ERR_LEN]; /* why the room shut us out, or "" */
	char dflt[PAPO_ROOMID_LEN + 1]; /* the default room's id, or "" */
	size_t nrooms;           /* as the node's last list said */
	char lockpath[SERVE_PATH_MAX];
	char jsonpath[SERVE_PATH_MAX];
};

static int
serve_paths(char err[PAPO_ERR_LEN], struct papo *p)
{
	const char *home = p->cfg->node.home;

	if ((size_t)snprintf(p->lockpath, sizeof(p->lockpath), "%s/%s", home,
	    SERVE_LOCK) >= sizeof(p->lockpath) ||
	    (size_t)snprintf(p->jsonpath, sizeof(p->jsonpath), "%s/%s", home,
	    SERVE_JSON) >= sizeof(p->jsonpath)) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return -1;
	}
	if (mkdir(home, 0700) == -1 && errno != EEXIST) {
		snprintf(err, PAPO_ERR_LEN, "cannot create %s: %s", home,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Takes the lock at path (home's serve.lock) into *fd, so that two
 * daemons never share one home, nor a command replace a daemon's room
 * under it.  The lock file stays when the daemon stops: removing it would
 * let a daemon that opened it just before lock a file no one else can
 * see.  create 0: a home without the file has no daemon (*fd -1).
 */
static int
serve_flock(char err[PAPO_ERR_LEN], const char *path, const char *home,
    int create, int *fd)
{
	char buf[32];
	ssize_t n;
	long pid;

	*fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (*fd == -1) {
		if (!create && errno == ENOENT)
			return 0;
		snprintf(err, PAPO_ERR_LEN, "cannot open %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK) {
		snprintf(err, PAPO_ERR_LEN, "cannot lock %s: %s", path,
		    strerror(errno));
	} else {
		n = pread(*fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		if ((pid = strtol(buf, NULL, 10)) > 0)
			snprintf(err, PAPO_ERR_LEN, "another papo serve (pid %ld) "
			    "is running on %s", pid, home);
		else
			snprintf(err, PAPO_ERR_LEN, "another papo serve is "
			    "running on %s", home);
	}
	close(*fd);
	*fd = -1;
	return -1;
}

static int
serve_lock(char err[PAPO_ERR_LEN], struct papo *p)
{
	char buf[32];
	int n;

	if (serve_flock(err, p->lockpath, p->cfg->node.home, 1,
	    &p->lockfd) == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(p->lockfd, 0) == -1 ||
	    pwrite(p->lockfd, buf, (size_t)n, 0) != n)
		log_msg(LOG_WARN, "cannot write the pid into %s: %s",
		    p->lockpath, strerror(errno));
	return 0;
}

int
serve_hold(char err[PAPO_ERR_LEN], const char *home, int *fd)
{
	char path[SERVE_PATH_MAX], why[PAPO_ERR_LEN];

	*fd = -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", home, SERVE_LOCK) >=
	    sizeof(path)) {
		snprintf(err, PAPO_ERR_LEN, "path too long: %s", home);
		return -1;
	}
	if (serve_flock(why, path, home, 0, fd) == 0)
		return 0;
	/* "another papo serve (pid N) is running on HOME" */
	snprintf(err, PAPO_ERR_LEN, "%s; stop it first, since it holds the "
	    "room there, then run this again", strncmp(why, "another ", 8) ==
	    0 ? why + 8 : why);
	return -1;
}

/*
 * The QUIC address for the invite home_create prints, which needs a real
 * port: with port 0 the default port stands in, as that invite is
 * dropped and the node's (with the bound port) is printed instead.
 */
static void
serve_invite_listen(const char *listen, char *out, size_t n)
{
	struct addr a, def;
	char text[ADDR_STRLEN];

	if (addr_parse_listen(listen, &a) == 0 && a.port == 0 &&
	    addr_parse(PAPO_DEFAULT_LISTEN, &def) == 0) {
		a.port = def.port;
		addr_format(&a, text);
		listen = text;
	}
	snprintf(out, n, "%s", listen);
}

/*
 * Loads the certificate HTTPS serves: PAPO_TLS_CERT and PAPO_TLS_KEY, or
 * the self-signed one of home (made now if there is none, for the bound
 * address too when it names one).  Nothing: plain HTTP.
 */
static int
serve_tls(char err[PAPO_ERR_LEN], struct papo *p)
{
	const struct serve_config *c = p->cfg;
	struct addr_bind b;

	if (c->tls_self) {
		/* The bound address, unless it is a wildcard (tls_self names
		 * the loopback ones anyway). */
		p->tls = tls_self(err, c->node.home, addr_bind(c->http,
		    HTTP_BIND_FLAGS, &b) == ADDR_OK && !b.wildcard ? b.host :
		    NULL);
		return p->tls != NULL ? 0 : -1;
	}
	if (c->tls_cert == NULL && c->tls_key == NULL)
		return 0;
	if (c->tls_cert == NULL || c->tls_key == NULL) {
		snprintf(err, PAPO_ERR_LEN, "PAPO_TLS_CERT and PAPO_TLS_KEY go "
		    "together: set both (or PAPO_TLS=self)");
		return -1;
	}
	p->tls = tls_new(err, c->tls_cert, c->tls_key);
	return p->tls != NULL ? 0 : -1;
}

/* 0 when a socket of type can bind text (read with flags, as the real
 * bind reads it) now, else errno. */
static int
serve_try_bind(const char *text, int type, unsigned flags)
{
	struct addr_bind b;
	struct addr a;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, off = 0, rc = 0, dual;

	if (addr_bind(text, flags, &b) != ADDR_OK || b.a.port == 0)
		return 0;
	/* 0.0.0.0 binds [::], both families, as the QUIC socket does. */
	a = b.a;
	dual = type == SOCK_DGRAM && b.wildcard && a.family == 4;
	if (dual)
		a.family = 6;
	len = (socklen_t)addr_to_sockaddr(&a, a.family == 4 ? AF_INET :
	    AF_INET6, &ss);
	fd = os_socket(ss.ss_family, type, 0, 0);
	if (fd == -1 && dual) {
		/* No IPv6 here: the wildcard is IPv4's. */
		len = (socklen_t)addr_to_sockaddr(&b.a, AF_INET, &ss);
		fd = os_socket(AF_INET, type, 0, 0);
	}
	if (fd == -1)
		return 0;
	/* As http.c and quic.c bind: a port in TIME_WAIT is free. */
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	else if (dual && ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)&ss, len) == -1)
		rc = errno;
	close(fd);
	return rc;
}

/*
 * Checks that the HTTP and QUIC ports can be bound before anything is
 * made: a first start must not create a room, a certificate or a lock it
 * then cannot serve.  Says which setting chooses another port.  The ports
 * are bound for real later; what takes one between the two is said by
 * that bind.
 */
static int
serve_ports(char err[PAPO_ERR_LEN], const struct serve_config *c)
{
	static const char *const why = "another papo serve (of another "
	    "PAPO_HOME) or another program has it";
	int e;

	if ((e = serve_try_bind(c->http, SOCK_STREAM, HTTP_BIND_FLAGS)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot serve HTTP on %s: %s%s%s; "
		    "choose another port with --http ADDR:PORT (or PAPO_HTTP; "
		    "port 0 picks a free one)", c->http, strerror(e),
		    e == EADDRINUSE ? ": " : "", e == EADDRINUSE ? why : "");
		return -1;
	}
	if ((e = serve_try_bind(c->node.listen, SOCK_DGRAM,
	    ADDR_BIND_ANY_PORT)) != 0) {
		snprintf(err, PAPO_ERR_LEN, "cannot listen for QUIC on UDP %s: "
		    "%s%s%s; choose another port with --listen ADDR:PORT (or "
		    "PAPO_LISTEN; port 0 picks a free one)", c->node.listen,
		    strerror(e), e == EADDRINUSE ? ": " : "",
		    e == EADDRINUSE ? why : "");
		return -1;
	}
	return 0;
}

/* How many rooms home holds (home_dirs), the folder of the first into
 * first (len bytes) when any; -1 with err. */
static int
serve_rooms_held(char err[PAPO_ERR_LEN], const char *home, char *first,
    size_t len)
{
	char **dirs = NULL;
	size_t n = 0;

	if (home_dirs(err, home, &dirs, &n) == -1)
		return -1;
	if (n > 0)
		snprintf(first, len, "%s", dirs[0]);
	home_dirs_free(dirs, n);
	return (int)n;
}

/* For a home in no room yet: joins PAPO_INVITE's or creates one, in
 * the home itself, and sets *made. */
static int
serve_room_make(char err[PAPO_ERR_LEN], const struct serve_config *c,
    int *made)
{
	char listen[128], why[PAPO_ERR_LEN];
	const char *name = c->name;
	struct passwd *pw;
	char *invite = NULL;

	if ((name == NULL || name[0] == '\0') &&
	    (pw = getpwuid(getuid())) != NULL)
		name = pw->pw_name;
	if (name == NULL || name[0] == '\0')
		name = getenv("USER");
	if (name == NULL || name[0] == '\0') {
		snprintf(err, PAPO_ERR_LEN, "%s has no room yet and no member "
		    "name is known: pass --name NAME or set PAPO_NAME",
		    c->node.home);
		return -1;
	}
	if (c->invite != NULL && c->invite[0] != '\0') {
		if (home_join(why, c->node.home, c->invite, name, c->about,
		    NULL) == -1) {
			snprintf(err, PAPO_ERR_LEN, "PAPO_INVITE: %s", why);
			return -1;
		}
		log_msg(LOG_INFO, "joined the room of PAPO_INVITE as %s", name);
		*made = 1;
		return 0;
	}
	serve_invite_listen(c->node.listen, listen, sizeof(listen));
	if (home_create(err, c->node.home, name, c->about, c->room, NULL,
	    listen, &invite) == -1)
		return -1;
	free(invite);
	log_msg(LOG_INFO, "created a new room in %s; you are %s%s",
	    c->node.home, name, name != c->name ? " (the login name: 'papo "
	    "rename NAME' changes it)" : "");
	*made = 1;
	return 0;
}

/*
 * --name (or PAPO_NAME) names the member of a room made or joined; a
 * member that has a name keeps it (docs/PROTOCOL.md, "Names"): when the
 * one given is another, say so, and how to rename.
 */
static void
serve_note_name(const struct serve_config *c, const char *first)
{
	char why[PAPO_ERR_LEN];
	struct room_file r;

	if (c->name == NULL || c->name[0] == '\0' ||
	    roomfile_load(why, first, &r) == -1)
		return;
	if (strcmp(r.me, c->name) != 0)
		log_msg(LOG_WARN, "--name %s is not used: this member is %s in "
		    "room %s, and keeps its name; 'papo rename %s' renames it "
		    "(the room learns it)", c->name, r.me, r.name, c->name);
	roomfile_wipe(&r);
}

/*
 * The banner's line for each room of home, malloc'd (NULL when home
 * holds one room, or out of memory: the one line of old is printed):
 * its name, fingerprint and this member's name there, so that a daemon
 * in several rooms says which it follows, and how to print each one's
 * invite.
 */
static char *
serve_room_lines(const char *home)
{
	char err[PAPO_ERR_LEN], **dirs = NULL, *out = NULL;
	size_t n = 0, len = 0, used = 0;

	if (home_dirs(err, home, &dirs, &n) == -1 || n < 2)
		goto done;
	len = n * (2 * PAPO_NAME_MAX + ROOM_NAME_MAX * 2 + 96) + 1;
	if ((out = malloc(len)) == NULL)
		goto done;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char name[PAPO_NAME_MAX + 1], fpr[PAPO_FPR_LEN + 1];
		struct room_file r;

		if (home_describe(err, dirs[i], name, fpr) == -1 ||
		    roomfile_load(err, dirs[i], &r) == -1)
			continue;
		used += (size_t)snprintf(out + used, len - used, "room: %s, "
		    "fingerprint %s, as %s; 'papo invite --room %s' prints its "
		    "invite\n", name, fpr, r.me, name);
		roomfile_wipe(&r);
	}
done:
	home_dirs_free(dirs, n);
	return out;
}

/*
 * What the daemon opened beyond this machine, said in the banner: the
 * README's first command listens on every interface, sends LAN beacons
 * and asks the home router for a port, and a person should not have to
 * read --help to learn it (docs/SECURITY.md, "What papo serve opens").
 * Then how to keep it on this machine.
 */
static void
serve_banner_net(const struct papo *p)
{
	const struct serve_config *c = p->cfg;
	struct addr_bind q, h;
	int wide, lan, map;

	/* The bound address; when it does not parse (q zeroed), wide. */
	addr_bind(p->quic, ADDR_BIND_ANY_PORT, &q);
	wide = !q.loopback;
	/* Beacons and the router's mapping are for a daemon reached from
	 * elsewhere (net.c and room.c leave them out on loopback). */
	lan = wide && !c->node.nolan && c->node.version != 1;
	map = wide && !c->node.noportmap;
	if (!wide)
		printf("network: QUIC on UDP %s only: no other machine reaches "
		    "this member\n", p->quic);
	else
		printf("network: QUIC on UDP %s%s: members on other machines "
		    "reach this one there\n", p->quic,
		    q.wildcard ? ", every interface" : "");
	if (lan)
		printf("network: LAN beacons every 5 s, so that members on "
		    "this network find each other (PAPO_LAN=off stops them)\n");
	if (map)
		printf("network: the home router is asked to forward UDP %u "
		    "here (UPnP-IGD, NAT-PMP; PAPO_PORTMAP=off stops it)\n",
		    (unsigned)q.a.port);
	if (addr_bind(c->http, HTTP_BIND_FLAGS, &h) == ADDR_OK && !h.loopback)
		printf("network: HTTP on %s (every request but /healthz needs "
		    "the token)\n", c->http);
	if (wide)
		printf("network: to keep papo on this machine only: papo serve "
		    "--listen 127.0.0.1:%u\n", (unsigned)q.a.port);
}

/* The room, made first if need be (p->first), and its name and
 * fingerprint for the banner. */
static int
serve_room(char err[PAPO_ERR_LEN], struct papo *p)
{
	const struct serve_config *c = p->cfg;
	char first[SERVE_PATH_MAX];
	int held;

	p->first = 0;
	/* A home in rooms keeps them, its first one left or not; one in
	 * none gets one, in the home itself. */
	if ((held = serve_rooms_held(err, c->node.home, first,
	    sizeof(first))) == -1)
		return -1;
	if (held == 0) {
		if (serve_room_make(err, c, &p->first) == -1)
			return -1;
		snprintf(first, sizeof(first), "%s", c->node.home);
	} else
		serve_note_name(c, first);
	/* The banner names the home's first room (the default's name
	 * comes with the node's list of rooms), or each room held. */
	if (home_describe(err, first, p->room, p->fpr) == -1)
		return -1;
	p->rooms = serve_room_lines(c->node.home);
	return 0;
}

/*
 * A daemon that holds a room keeps it and does not join PAPO_INVITE; when
 * that invite is for another room (a container whose PAPO_INVITE was
 * changed, say), the member would seem to be where it is not: say so.
 * Reads only; nothing is refused for it.
 */
static void
serve_note_invite(const struct serve_config *c)
{
	char why[PAPO_ERR_LEN], room[PAPO_NAME_MAX + 1] = "", path[SERVE_PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/room.json", c->node.home);
	if (c->invite == NULL || c->invite[0] == '\0' || access(path, F_OK) != 0)
		return;
	if ((r = home_is(why, c->node.home, c->invite, room)) == 1)
		return;
	log_msg(LOG_WARN, "PAPO_INVITE is ignored: %s, and %s already holds "
	    "room %s, which is kept (start with an empty %s to join another "
	    "room)", r == 0 ? "it is for another room" : why, c->node.home,
	    room[0] != '\0' ? room : "?", c->node.home);
}

/* Every event stream and MCP session is a descriptor: take as many as
 * the system allows this user, not the soft default of 1,024. */
static void
serve_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * Takes SIGINT, SIGTERM and SIGHUP before the node thread starts (on
 * Linux they are blocked in every thread, which inherit the mask) and
 * reads them from a descriptor in the loop instead (lib/os.h).  They are
 * never given back: a second signal during the stop must not kill the
 * process halfway.
 */
static int
serve_signals(char err[PAPO_ERR_LEN], struct papo *p)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	if ((p->sigs = os_signals_new(sigs, 3)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot take signals: %s",
		    strerror(errno));
		return -1;
	}
	/* A client gone mid-answer must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int serve_write_json(char err[PAPO_ERR_LEN], struct papo *p,
    const char *quic, const char *invite);

/*
 * SIGHUP: reads the certificate and key again (a renewal), and tells
 * clients the new one through serve.json.  Open connections, event
 * streams among them, keep the certificate they were made with.  A bad
 * pair is refused, with the reason, and the old one stays.
 */
static void
serve_reload(struct papo *p)
{
	char err[PAPO_ERR_LEN];

	if (p->tls == NULL) {
		log_msg(LOG_INFO, "SIGHUP: nothing to reload (no TLS)");
		return;
	}
	if (tls_reload(err, p->tls) == -1) {
		log_msg(LOG_WARN, "SIGHUP: kept the certificate in use: %s",
		    err);
		return;
	}
	log_msg(LOG_INFO, "SIGHUP: serving the certificate in %s, SHA-256 "
	    "fingerprint %s", tls_certfile(p->tls), tls_fingerprint(p->tls));
	if (p->json_written && serve_write_json(err, p, p->quic,
	    p->invite) == -1)
		log_msg(LOG_WARN, "%s", err);
}

static void
serve_on_signal(void *arg, uint32_t events)
{
	struct papo *p = arg;
	int sig;

	(void)events;
	while ((sig = os_signals_next(p->sigs)) != 0) {
		if (sig == SIGHUP) {
			serve_reload(p);
			continue;
		}
		log_msg(LOG_INFO, "stopping on %s",
		    sig == SIGINT ? "SIGINT" : "SIGTERM");
		loop_stop(p->loop);
	}
}

static int serve_write_json(char err[PAPO_ERR_LEN], struct papo *p,
    const char *quic, const char *invite);

/*
 * Prints the URLs and the room, once.  The invite holds the room's
 * secret: it is printed only on the start that made the room and only to
 * a terminal, never into a log (docker logs, the journal, serve.log);
 * the room's name and fingerprint tell rooms apart there, and 'papo
 * invite' prints the invite whenever it is wanted (docs/SECURITY.md).
 * With a TURN relay the banner waits for the relay's first answer, up
 * to SERVE_RELAY_WAIT_NS: an invite without our relayed address leaves
 * a joiner behind another NAT no way in (docs/REACHABILITY.md).
 */
static void
serve_banner(struct papo *p)
{
	if (p->banner_shown)
		return;
	p->banner_shown = 1;
	if (p->banner != NULL)
		loop_timer_set(p->banner, 0);
	printf("mcp: %s/mcp\ndashboard: %s/\n", http_url(p->http),
	    http_url(p->http));
	if (p->cfg->public_url != NULL)
		printf("public: %s/mcp\n", http_public_url(p->http));
	if (p->tls != NULL)
		printf("tls: %s, SHA-256 fingerprint %s\n", tls_certfile(p->tls),
		    tls_fingerprint(p->tls));
	if (p->rooms != NULL)
		fputs(p->rooms, stdout);
	else
		printf("room: %s, fingerprint %s; 'papo invite' prints its "
		    "invite\n", p->room, p->fpr);
	serve_banner_net(p);
	if (p->first && isatty(STDOUT_FILENO))
		printf("invite: %s\n", p->invite);
	fflush(stdout);
}

static void
serve_on_banner(void *arg)
{
	serve_banner(arg);
}

/* The string member key of the JSON object text into out ("" when
 * there is none). */
static void
serve_json_str(const char *text, const char *key, char *out, size_t len)
{
	cJSON *o = text != NULL ? cJSON_Parse(text) : NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	snprintf(out, len, "%s", cJSON_IsString(v) ? v->valuestring : "");
	cJSON_Delete(o);
}

/* NODE_EV_ADDRS of the default room (json: "invite", "relay"): papo
 * invite prints its new invite from now on; the banner waits for the
 * relay's first answer. */
static void
serve_addrs(struct papo *p, const char *json)
{
	cJSON *o = json != NULL ? cJSON_Parse(json) : NULL;
	const cJSON *inv = cJSON_GetObjectItemCaseSensitive(o, "invite");
	const cJSON *relay = cJSON_GetObjectItemCaseSensitive(o, "relay");
	char err[PAPO_ERR_LEN], *invite;

	if (!cJSON_IsString(inv) ||
	    (invite = strdup(inv->valuestring)) == NULL) {
		cJSON_Delete(o);
		return;
	}
	free(p->invite);
	p->invite = invite;
	if (serve_write_json(err, p, p->quic, p->invite) == -1)
		log_msg(LOG_WARN, "%s", err);
	if (!p->banner_shown && !(cJSON_IsString(relay) &&
	    strcmp(relay->valuestring, "allocating") == 0))
		serve_banner(p);
	cJSON_Delete(o);
}

/* The node's list of rooms changed (or came first, at start): which is
 * the default, for what names no room. */
static void
serve_rooms(struct papo *p, const char *json)
{
	cJSON *o = json != NULL ? cJSON_Parse(json) : NULL;
	const cJSON *d;

	if (o == NULL)
		return;
	d = cJSON_GetObjectItemCaseSensitive(o, "default");
	snprintf(p->dflt, sizeof(p->dflt), "%s", cJSON_IsString(d) ?
	    d->valuestring : "");
	p->nrooms = (size_t)cJSON_GetArraySize(
	    cJSON_GetObjectItemCaseSensitive(o, "rooms"));
	sse_rooms(p->sse, o);
	cJSON_Delete(o);
}

/* Takes everything the node has finished or seen. */
static void
serve_on_node(void *arg, uint32_t events)
{
	struct papo *p = arg;
	struct node_msg *m;
	char why[PAPO_ERR_LEN];

	(void)events;
	while ((m = node_take(p->node)) != NULL) {
		switch (m->kind) {
		case NODE_HISTORY:
		case NODE_SEARCH:
			if (mcp_owns(p->mcp, m)) {
				mcp_node_answer(p->mcp, m);
				break;
			}
			http_node_done(m);
			break;
		case NODE_EV_ROOMS:
			serve_rooms(p, m->json);
			mcp_rooms(p->mcp, m->json);
			sse_publish(p->sse, m->kind, NULL, m->json);
			node_msg_free(m);
			break;
		case NODE_EV_MESSAGE:
			/* Every room's: MCP gives each session those of its
			 * room, or of all. */
			mcp_message(p->mcp, m->json);
			/* FALLTHROUGH */
		case NODE_EV_RECEIPT:
		case NODE_EV_PRESENCE:
		case NODE_EV_ROOM:
		case NODE_EV_BLOB:
			sse_publish(p->sse, m->kind, m->room_id, m->json);
			node_msg_free(m);
			break;
		case NODE_EV_ADDRS:
			/* What the node advertises changed: papo invite
			 * prints the default room's new invite from now on. */
			if (strcmp(m->room_id, p->dflt) == 0)
				serve_addrs(p, m->json);
			node_msg_free(m);
			break;
		case NODE_EV_REFUSED:
			/* Out of its only room for good: the daemon stops
			 * with the reason (serve_run).  Beside other rooms,
			 * that one only is out: said in the log. */
			serve_json_str(m->json, "error", why, sizeof(why));
			if (p->nrooms > 1) {
				log_msg(LOG_ERROR, "room %.8s: %s", m->room_id,
				    why[0] != '\0' ? why :
				    "refused by the room");
				node_msg_free(m);
				break;
			}
			snprintf(p->refused, sizeof(p->refused), "%s",
			    why[0] != '\0' ? why : "refused by the room");
			loop_stop(p->loop);
			node_msg_free(m);
			break;
		case NODE_EV_SENT:
			/* Watchers see the room whole; agents are not told
			 * what they said themselves. */
			sse_publish(p->sse, NODE_EV_MESSAGE, m->room_id, m->json);
			node_msg_free(m);
			break;
		default:
			/* Every other kind is a request's answer: its
			 * requester (HTTP, and MCP through it) takes it. */
			http_node_done(m);
			break;
		}
	}
}

/* Writes serve.json atomically (fs_write), so a reader sees the old file
 * or the whole new one. */
static int
serve_write_json(char err[PAPO_ERR_LEN], struct papo *p, const char *quic,
    const char *invite)
{
	char mcp[128], dash[128];
	const char *url = http_url(p->http);
	char *text = NULL, *line = NULL;
	cJSON *o = NULL;
	size_t len;
	int rc = -1;

	snprintf(mcp, sizeof(mcp), "%s/mcp", url);
	snprintf(dash, sizeof(dash), "%s/", url);
	if ((o = cJSON_CreateObject()) == NULL ||
	    cJSON_AddNumberToObject(o, "pid", (double)getpid()) == NULL ||
	    cJSON_AddStringToObject(o, "http", url) == NULL ||
	    cJSON_AddStringToObject(o, "mcp", mcp) == NULL ||
	    cJSON_AddStringToObject(o, "dashboard", dash) == NULL ||
	    cJSON_AddStringToObject(o, "quic", quic) == NULL ||
	    (invite != NULL ? cJSON_AddStringToObject(o, "invite", invite) :
	    cJSON_AddNullToObject(o, "invite")) == NULL ||
	    (p->tls != NULL &&
	    (cJSON_AddStringToObject(o, "tls_fingerprint",
	    tls_fingerprint(p->tls)) == NULL ||
	    cJSON_AddStringToObject(o, "tls_pin", tls_pin(p->tls)) == NULL ||
	    cJSON_AddStringToObject(o, "tls_cert",
	    tls_certfile(p->tls)) == NULL)) ||
	    (text = cJSON_Print(o)) == NULL ||
	    (line = malloc((len = strlen(text)) + 2)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto out;
	}
	memcpy(line, text, len);
	line[len++] = '\n';
	if (fs_write(err, p->jsonpath, line, len) == -1)
		goto out;
	p->json_written = 1;
	rc = 0;
out:
	free(line);
	cJSON_free(text);
	cJSON_Delete(o);
	return rc;
}

int
serve_run(char err[PAPO_ERR_LEN], const struct serve_config *c)
{
	struct papo p;
	struct http_mount mounts[6];
	struct http_config hc;
	struct oauth_config oc;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	memset(mounts, 0, sizeof(mounts));
	memset(&hc, 0, sizeof(hc));
	p.cfg = c;
	p.lockfd = -1;
	serve_note_invite(c);
	hc.bind = c->http;
	hc.token = c->token;
	hc.public_url = c->public_url;
	hc.cors = c->cors;
	memset(&oc, 0, sizeof(oc));
	oc.home = c->node.home;
	oc.token = c->token;
	oc.public_url = c->public_url;
	oc.on = c->oauth;
	oc.cimd_private = c->oauth_cimd_private;
	oc.access_s = c->oauth_access_s;
	oc.code_s = c->oauth_code_s;
	/* Refuse a bad or unsafe HTTP address before touching anything. */
	if (http_check(err, &hc) == -1 ||
	    oauth_check(err, c->http, &oc) == -1 ||
	    serve_paths(err, &p) == -1 ||
	    serve_lock(err, &p) == -1 ||
	    serve_ports(err, c) == -1 ||
	    serve_tls(err, &p) == -1 ||
	    serve_room(err, &p) == -1 ||
	    serve_signals(err, &p) == -1)
		goto out;
	serve_files();
	if ((p.loop = loop_new()) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "cannot make the event loop: %s",
		    strerror(errno));
		goto out;
	}
	if ((p.oauth = oauth_new(err, p.loop, &oc)) == NULL ||
	    (p.node = node_start(err, &c->node)) == NULL)
		goto out;
	if ((p.sse = sse_new(p.loop)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory");
		goto out;
	}
	if ((p.mcp = mcp_new(err, p.loop, p.node, c->node.home,
	    (uint64_t)c->mcp_idle_s * NS_PER_S)) == NULL)
		goto out;
	mounts[0].routes = api_routes(&mounts[0].nroutes);
	mounts[0].arg = p.node;
	mounts[1].routes = sse_routes(&mounts[1].nroutes);
	mounts[1].arg = p.sse;
	mounts[2].routes = mcp_routes(&mounts[2].nroutes);
	mounts[2].arg = p.mcp;
	mounts[3].routes = web_routes(&mounts[3].nroutes);
	mounts[3].arg = NULL;
	mounts[4].routes = oauth_routes(p.oauth, &mounts[4].nroutes);
	mounts[4].arg = p.oauth;
	mounts[5].routes = oauth_form_routes(p.oauth, &mounts[5].nroutes);
	mounts[5].arg = p.oauth;
	mounts[5].form = 1;
	hc.tls = p.tls;
	hc.mounts = mounts;
	hc.nmounts = 6;
	if ((p.http = http_new(err, p.loop, &hc)) == NULL)
		goto out;
	oauth_start(p.oauth, p.http);
	if (loop_add_fd(p.loop, node_fd(p.node), LOOP_IN, serve_on_node,
	    &p) == -1 ||
	    loop_add_fd(p.loop, os_signals_fd(p.sigs), LOOP_IN,
	    serve_on_signal, &p) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot watch the node and signals: "
		    "%s", strerror(errno));
		goto out;
	}
	node_quic_addr(p.node, p.quic, sizeof(p.quic));
	/* NULL with several rooms and none the default: serve.json then
	 * says "invite": null, and papo invite asks for --room. */
	p.invite = node_invite(p.node);
	if (serve_write_json(err, &p, p.quic, p.invite) == -1)
		goto out;
	if (node_relay(p.node)) {
		if ((p.banner = loop_timer_new(p.loop, serve_on_banner,
		    &p)) == NULL) {
			snprintf(err, PAPO_ERR_LEN, "out of memory");
			goto out;
		}
		loop_timer_set(p.banner, loop_now_ns() + SERVE_RELAY_WAIT_NS);
	} else
		serve_banner(&p);
	log_msg(LOG_INFO, "serving: HTTP %s, QUIC %s", http_url(p.http), p.quic);
	if (loop_run(p.loop) == -1) {
		snprintf(err, PAPO_ERR_LEN, "the main loop failed: %s",
		    strerror(errno));
		goto out;
	}
	if (p.refused[0] != '\0') {
		snprintf(err, PAPO_ERR_LEN, "%s", p.refused);
		goto out;
	}
	rc = 0;
out:
	if (p.node != NULL) {
		/* What the node answered on its way out (sends kept in the
		 * outbox, answered queued) reaches its clients before HTTP
		 * stops. */
		node_halt(p.node);
		if (p.http != NULL)
			serve_on_node(&p, 0);
		if (p.loop != NULL)
			loop_del_fd(p.loop, node_fd(p.node));
		node_stop(p.node);
	}
	/* Event streams are told to come back (retry:) and closed before
	 * HTTP stops.  After node_stop: no node answer can now arrive for a
	 * request http_free answers and frees. */
	mcp_free(p.mcp);
	sse_free(p.sse);
	oauth_free(p.oauth);
	http_free(p.http);
	tls_free(p.tls);
	if (p.loop != NULL && p.sigs != NULL)
		loop_del_fd(p.loop, os_signals_fd(p.sigs));
	loop_free(p.loop);
	if (p.json_written)
		unlink(p.jsonpath);
	free(p.invite);
	free(p.rooms);
	os_signals_free(p.sigs);
	if (p.lockfd != -1)
		close(p.lockfd);
	if (rc == 0)
		log_msg(LOG_INFO, "stopped");
	return rc;
}
