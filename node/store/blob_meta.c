/*
 * blob_meta.c: REF.meta, what a message said of a file (blob.h): its key,
 * size, name and media type, as a small JSON object written atomically
 * (fs_write).  Below blob.c and blob_fetch.c, above blob_file.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "lib/b32.h"
#include "lib/fs.h"
#include "node/store/blob_int.h"
#include "node/wire/attach.h"

#define META_MAX 2048             /* bytes of a REF.meta */

static int
meta_write(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const struct attach *a, int replace)
{
	char path[BLOB_PATH_MAX], key[ATTACH_REF_LEN + 1];
	cJSON *o = NULL;
	char *text = NULL;
	int rc = -1;

	if (blob_ref_check(err, a->ref) == -1 || attach_check(err, a) == -1)
		return -1;
	blob_path(bs, a->ref, ".meta", path);
	if (!replace && blob_exists(path, NULL))
		return 0;               /* the first description stays */
	b32_encode(a->key, PAPO_KEY_LEN, key);
	if ((o = cJSON_CreateObject()) == NULL ||
	    cJSON_AddStringToObject(o, "key", key) == NULL ||
	    cJSON_AddNumberToObject(o, "size", (double)a->size) == NULL ||
	    cJSON_AddStringToObject(o, "name", a->name) == NULL ||
	    cJSON_AddStringToObject(o, "type", a->type) == NULL ||
	    (text = cJSON_PrintUnformatted(o)) == NULL) {
		err_set(err, "out of memory");
		goto out;
	}
	rc = fs_write(err, path, text, strlen(text));
out:
	sodium_memzero(key, sizeof(key));
	if (text != NULL) {
		sodium_memzero(text, strlen(text));
		free(text);
	}
	cJSON_Delete(o);
	return rc;
}

int
blob_meta_save(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const struct attach *a)
{
	return meta_write(err, bs, a, 0);
}

int
blob_meta_set(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const struct attach *a)
{
	return meta_write(err, bs, a, 1);
}

/* A string field of o into out (cap bytes with its NUL): 0 or -1. */
static int
meta_str(const cJSON *o, const char *name, char *out, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap)
		return -1;
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

int
blob_meta_load(char err[PAPO_ERR_LEN], struct blob_store *bs,
    const char *ref, struct attach *a)
{
	char path[BLOB_PATH_MAX], key[ATTACH_REF_LEN + 1];
	char *data = NULL;
	size_t len, bad;
	cJSON *o = NULL;
	int64_t size;
	int ex, rc = -1;

	memset(a, 0, sizeof(*a));
	if (blob_ref_check(err, ref) == -1)
		return -1;
	blob_path(bs, ref, ".meta", path);
	if (fs_read(err, path, META_MAX, &data, &len, &ex) == -1) {
		if (!ex)
			err_set(err, "no message here names file %s", ref);
		return -1;
	}
	o = cJSON_ParseWithLength(data, len);
	if (o == NULL || meta_str(o, "key", key, sizeof(key)) == -1 ||
	    strlen(key) != ATTACH_REF_LEN ||
	    b32_decode(key, ATTACH_REF_LEN, a->key, PAPO_KEY_LEN, &bad) !=
	    (long)PAPO_KEY_LEN ||
	    fs_json_int(cJSON_GetObjectItemCaseSensitive(o, "size"), 0,
	    (int64_t)BLOB_SIZE_MAX, &size) == -1 ||
	    meta_str(o, "name", a->name, sizeof(a->name)) == -1 ||
	    meta_str(o, "type", a->type, sizeof(a->type)) == -1) {
		err_set(err, "%s is damaged", path);
		goto out;
	}
	a->size = (uint64_t)size;
	memcpy(a->ref, ref, BLOB_REF_LEN + 1);
	rc = attach_check(err, a);
out:
	sodium_memzero(key, sizeof(key));
	if (data != NULL) {
		sodium_memzero(data, len);
		free(data);
	}
	cJSON_Delete(o);
	if (rc == -1)
		sodium_memzero(a->key, sizeof(a->key));
	return rc;
}
