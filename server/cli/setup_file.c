/*
 * setup_file.c: the files papo setup edits: read whole and checked
 * (bounded in size), written back atomically with the mode they had and
 * their directories made; and the one line said about each setting.
 * Main thread of a short-lived command.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/fs.h"
#include "node/node.h"
#include "server/cli/setup.h"
#include "server/cli/setup_int.h"

#define SETUP_FILE_MAX (64 * 1024 * 1024)  /* ~/.claude.json grows */

static const char *const setup_verbs[][2] = {
	{ "added", "would be added" },
	{ "updated", "would be updated" },
	{ "removed", "would be removed" },
	{ "already set up", "already set up" },
	{ "not set up: nothing to remove", "not set up: nothing to remove" },
};

/*
 * One line about one setting, "FILE: KEY: WHAT VERB"; with --print, the
 * text it would have, indented below it.
 */
void
setup_say(struct setup *s, const char *file, const char *key,
    const char *what, enum setup_said said, const char *show)
{
	printf("%s: %s: %s %s\n", file, key, what, setup_verbs[said][s->print]);
	if (said <= SAID_REMOVE)
		s->changed++;
	if (!s->print || show == NULL || said == SAID_REMOVE)
		return;
	for (const char *p = show; *p != '\0';) {
		size_t n = strcspn(p, "\n");

		printf("    %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* Creates the missing directories above path, each 0700. */
static int
setup_mkdirs(char err[PAPO_ERR_LEN], const char *path)
{
	char dir[SETUP_PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
			snprintf(err, PAPO_ERR_LEN, "cannot create %s: %s", dir,
			    strerror(errno));
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* Reads f->path whole; an absent file reads as "". */
int
sfile_load(char err[PAPO_ERR_LEN], struct sfile *f)
{
	struct stat st;
	char *real;
	size_t off = 0;
	int fd = -1, rc = -1;

	/* A settings file kept as a symlink (a dotfiles repository) is
	 * edited where it points, and stays a link. */
	if ((real = realpath(f->path, NULL)) != NULL) {
		snprintf(f->path, sizeof(f->path), "%s", real);
		free(real);
	} else if (lstat(f->path, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* A link whose target is missing: writing would replace the
		 * link with a file, and the dotfiles it kept would part from
		 * what the harness reads.  The person decides. */
		char to[SETUP_PATH_MAX];
		ssize_t n = readlink(f->path, to, sizeof(to) - 1);

		to[n > 0 ? n : 0] = '\0';
		snprintf(err, PAPO_ERR_LEN, "%s is a symbolic link to %s, which "
		    "does not exist: papo setup does not replace a link; create "
		    "the file it points to (or remove the link) and run it "
		    "again", f->path, to);
		return -1;
	}
	if ((fd = open(f->path, O_RDONLY | O_CLOEXEC)) == -1 && errno != ENOENT) {
		snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", f->path,
		    strerror(errno));
		return -1;
	}
	f->exists = fd != -1;
	f->mode = 0600;
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SETUP_FILE_MAX)) {
		snprintf(err, PAPO_ERR_LEN, "%s is not a regular file of at most "
		    "%d MB", f->path, SETUP_FILE_MAX >> 20);
		goto out;
	}
	f->len = fd != -1 ? (size_t)st.st_size : 0;
	if (fd != -1)
		f->mode = st.st_mode & 07777;
	if ((f->text = malloc(f->len + 1)) == NULL) {
		snprintf(err, PAPO_ERR_LEN, "out of memory reading %s", f->path);
		goto out;
	}
	while (off < f->len) {
		ssize_t r = read(fd, f->text + off, f->len - off);

		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(err, PAPO_ERR_LEN, "cannot read %s: %s", f->path,
			    r == 0 ? "it shrank while read" : strerror(errno));
			goto out;
		}
		off += (size_t)r;
	}
	f->text[off] = '\0';
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	return rc;
}

/* Replaces the file with data, unless --print; a file that was there
 * keeps its mode (fs_write makes it 0600, which new files stay). */
int
sfile_save(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f, const char *data, size_t len)
{
	if (s->print)
		return 0;
	if (setup_mkdirs(err, f->path) == -1 ||
	    fs_write(err, f->path, data, len) == -1)
		return -1;
	if (f->exists && f->mode != 0600 && chmod(f->path, f->mode) == -1) {
		snprintf(err, PAPO_ERR_LEN, "cannot restore the mode of %s: %s",
		    f->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes the file, unless --print, and the directories above it that
 * it leaves empty (papo setup made them), up to $HOME. */
int
sfile_unlink(char err[PAPO_ERR_LEN], const struct setup *s,
    const struct sfile *f)
{
	const char *home = getenv("HOME");
	char dir[SETUP_PATH_MAX], *slash;

	if (s->print)
		return 0;
	if (unlink(f->path) == -1 && errno != ENOENT) {
		snprintf(err, PAPO_ERR_LEN, "cannot remove %s: %s", f->path,
		    strerror(errno));
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", f->path);
	while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if ((home != NULL && strcmp(dir, home) == 0) || rmdir(dir) == -1)
			break;
	}
	return 0;
}

void
sfile_free(struct sfile *f)
{
	free(f->text);
	cJSON_Delete(f->doc);
	f->text = NULL;
	f->doc = NULL;
}
