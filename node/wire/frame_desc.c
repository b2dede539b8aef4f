/*
 * frame_desc.c: the frame engine: encodes, decodes, checks, signs and
 * verifies any struct a descriptor (frame_int.h) describes, so that a
 * frame type is declared once, in its family's file, and nothing here
 * names one.  It implements docs/PROTOCOL.md's "Frames" (a JSON object
 * per frame, strict) and "Signatures" (a fixed binary layout of the
 * signed fields after a label and the room id, so re-encoding the JSON
 * never breaks a signature).
 *
 * Pure: no I/O, no clock, no threads.  Decoding is strict: a field that
 * is unknown (to that version), duplicated, of the wrong JSON type or
 * missing, or a value over its limit, is refused with a typed error
 * before anything is allocated for it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/b32.h"
#include "lib/utf8.h"
#include "node/wire/frame_int.h"

/* The largest integer a JSON number carries exactly (2^53). */
#define FRAME_INT_MAX 9007199254740992.0
/* Base64url without padding of a signature and of an epoch's box. */
#define FRAME_SIG_B64_LEN 86
#define FRAME_BOX_B64_LEN 107
/* Fields of one object, "t" included. */
#define FIELDS_MAX 16
#define FRAME_SIG_INPUT_MAX (PAPO_BODY_MAX + 512)

_Static_assert(sizeof(enum ack_state) == sizeof(int) &&
    sizeof(enum punch_phase) == sizeof(int), "FK_ENUM is int-sized");
_Static_assert(FRAME_SIG_B64_LEN == (PAPO_SIG_LEN * 4 + 2) / 3 &&
    FRAME_BOX_B64_LEN == (SEC_BOX_LEN * 4 + 2) / 3, "base64url lengths");

/* Where a field's value and its companions are. */
#define AT(obj, off, type) ((type *)(void *)((char *)(obj) + (off)))
#define CAT(obj, off, type) \
	((const type *)(const void *)((const char *)(obj) + (off)))

#define TRY(x) do { if ((e = (x)) != FRAME_OK) return e; } while (0)

static unsigned
since(unsigned v)
{
	return v == 0 ? 1 : v;
}

/* Whether obj carries field f: a flag, a value that is not zero, or
 * always. */
static int
present(const struct frame_field *f, const void *obj)
{
	if (f->flags & FF_HAS)
		return *CAT(obj, f->has_off, int) != 0;
	if (f->flags & FF_NONZERO) {
		switch (f->kind) {
		case FK_U32:
			return *CAT(obj, f->off, uint32_t) != 0;
		case FK_U64:
			return *CAT(obj, f->off, uint64_t) != 0;
		default:
			return *CAT(obj, f->off, int) != 0;
		}
	}
	return 1;
}

/* The field by which obj names its own version (a hello's "v"), or
 * NULL. */
static const struct frame_field *
version_field(const struct frame_desc *d)
{
	for (size_t i = 0; i < d->nfields; i++)
		if (d->fields[i].kind == FK_VERSION)
			return &d->fields[i];
	return NULL;
}

/* The version obj is encoded as: the one it names, else the caller's;
 * version 1's fields at least. */
static unsigned
own_version(const struct frame_desc *d, const void *obj, unsigned version)
{
	const struct frame_field *f = version_field(d);

	if (f != NULL)
		version = *CAT(obj, f->off, uint32_t);
	return version < 1 ? 1 : version;
}

/* Sets field f of obj to 0 (FK_U32, FK_U64, FK_FLAG, FK_ENUM). */
static void
clear_value(const struct frame_field *f, void *obj)
{
	if (f->kind == FK_U32)
		*AT(obj, f->off, uint32_t) = 0;
	else if (f->kind == FK_U64)
		*AT(obj, f->off, uint64_t) = 0;
	else
		*AT(obj, f->off, int) = 0;
}

/* Checking. */

static enum frame_err
check_text(const struct frame_field *f, const char *s)
{
	size_t n = strlen(s);

	if ((f->flags & FF_NONEMPTY) && n == 0)
		return FRAME_ERR_VALUE;
	if (n > f->max)
		return f->too_long;
	if (!utf8_valid(s, n))
		return FRAME_ERR_UTF8;
	if ((f->flags & FF_PRINTABLE) && !utf8_printable(s, n))
		return FRAME_ERR_VALUE;
	return FRAME_OK;
}

static enum frame_err
check_field(const struct frame_field *f, const void *obj)
{
	enum frame_err e;

	switch (f->kind) {
	case FK_MSGID:
		return sec_msgid_valid(CAT(obj, f->off, char), NULL) ?
		    FRAME_OK : FRAME_ERR_VALUE;
	case FK_TEXT:
		return check_text(f, CAT(obj, f->off, char));
	case FK_BODY: {
		const char *s = *CAT(obj, f->off, char *);
		size_t n = *CAT(obj, f->n_off, size_t);

		if (s == NULL || strlen(s) != n)
			return FRAME_ERR_VALUE;
		if (n > f->max)
			return FRAME_ERR_BODY_LONG;
		return utf8_valid(s, n) ? FRAME_OK : FRAME_ERR_UTF8;
	}
	case FK_ENUM: {
		int v = *CAT(obj, f->off, int);

		for (int i = 1; f->names[i] != NULL; i++)
			if (v == i)
				return FRAME_OK;
		return FRAME_ERR_VALUE;
	}
	case FK_ADDRS:
		return *CAT(obj, f->n_off, size_t) > PAPO_ADDR_MAX ?
		    FRAME_ERR_TOO_MANY : FRAME_OK;
	case FK_LIST: {
		size_t n = *CAT(obj, f->n_off, size_t);
		const char *v = *CAT(obj, f->off, char *);

		if (n > f->max)
			return FRAME_ERR_TOO_MANY;
		for (size_t i = 0; i < n; i++) {
			const void *x = v + i * f->elem_size;

			if (f->elem == FK_MSGID && !sec_msgid_valid(x, NULL))
				return FRAME_ERR_VALUE;
			if (f->sub != NULL &&
			    (e = frame_desc_check(f->sub, x)) != FRAME_OK)
				return e;
		}
		return FRAME_OK;
	}
	default:
		return FRAME_OK;
	}
}

enum frame_err
frame_desc_check(const struct frame_desc *d, const void *obj)
{
	enum frame_err e;

	for (size_t i = 0; i < d->nfields; i++)
		if (present(&d->fields[i], obj))
			TRY(check_field(&d->fields[i], obj));
	return d->check != NULL ? d->check(obj) : FRAME_OK;
}

/* Encoding. */

static cJSON *
json_key(const uint8_t *k)
{
	char text[PAPO_ID_LEN + 1];

	b32_encode(k, PAPO_KEY_LEN, text);
	return cJSON_CreateString(text);
}

static cJSON *
json_b64(const uint8_t *p, size_t n)
{
	char text[FRAME_BOX_B64_LEN + 1];

	sodium_bin2base64(text, sizeof(text), p, n,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return cJSON_CreateString(text);
}

static cJSON *
json_addr(const struct addr *a)
{
	char text[ADDR_STRLEN];

	addr_format(a, text);
	return cJSON_CreateString(text);
}

/* The JSON value of field f of obj. */
static cJSON *
json_field(const struct frame_field *f, const void *obj, unsigned version)
{
	const void *p = CAT(obj, f->off, char);
	cJSON *arr;

	switch (f->kind) {
	case FK_KEY:
		return json_key(p);
	case FK_MSGID:
	case FK_TEXT:
		return cJSON_CreateString(p);
	case FK_BODY:
		return cJSON_CreateString(*(char *const *)p);
	case FK_U64:
		return cJSON_CreateNumber((double)*(const uint64_t *)p);
	case FK_U32:
	case FK_VERSION:
		return cJSON_CreateNumber((double)*(const uint32_t *)p);
	case FK_FLAG:
		return cJSON_CreateNumber(1);
	case FK_ENUM:
		return cJSON_CreateString(f->names[*(const int *)p]);
	case FK_ADDR:
		return json_addr(p);
	case FK_SIG:
		return json_b64(p, PAPO_SIG_LEN);
	case FK_BOX:
		return json_b64(p, SEC_BOX_LEN);
	case FK_ADDRS:
	case FK_LIST:
		break;
	}
	if ((arr = cJSON_CreateArray()) == NULL)
		return NULL;
	if (f->kind == FK_ADDRS) {
		const struct addr *a = p;

		for (size_t i = 0; i < *CAT(obj, f->n_off, size_t); i++) {
			cJSON *s = json_addr(&a[i]);

			if (s == NULL)
				goto fail;
			cJSON_AddItemToArray(arr, s);
		}
		return arr;
	}
	for (size_t i = 0; i < *CAT(obj, f->n_off, size_t); i++) {
		const char *x = *(const char *const *)p + i * f->elem_size;
		cJSON *c = f->elem == FK_KEY ? json_key((const uint8_t *)x) :
		    f->elem == FK_MSGID ? cJSON_CreateString(x) :
		    cJSON_CreateObject();

		if (c == NULL)
			goto fail;
		cJSON_AddItemToArray(arr, c);
		if (f->sub != NULL &&
		    frame_desc_to_json(f->sub, x, version, c) == -1)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

int
frame_desc_to_json(const struct frame_desc *d, const void *obj,
    unsigned version, cJSON *o)
{
	version = own_version(d, obj, version);
	if (d->name != NULL && cJSON_AddStringToObject(o, "t", d->name) == NULL)
		return -1;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *f = &d->fields[i];
		cJSON *c;

		if (since(f->since) > version || !present(f, obj))
			continue;
		if ((c = json_field(f, obj, version)) == NULL)
			return -1;
		if (!cJSON_AddItemToObject(o, f->name, c)) {
			cJSON_Delete(c);
			return -1;
		}
	}
	return 0;
}

/* Decoding. */

static int
json_type_ok(enum frame_kind k, const cJSON *c)
{
	switch (k) {
	case FK_U64:
	case FK_U32:
	case FK_VERSION:
	case FK_FLAG:
		return cJSON_IsNumber(c);
	case FK_ADDRS:
	case FK_LIST:
		return cJSON_IsArray(c);
	default:
		return cJSON_IsString(c);
	}
}

/* Checks obj's members against d's fields at version: no unknown,
 * duplicate, mistyped or missing one.  got[i] is then field i's value,
 * or NULL when absent. */
static enum frame_err
match_fields(const struct frame_desc *d, const cJSON *obj, unsigned version,
    const cJSON *got[FIELDS_MAX])
{
	const cJSON *c, *t = NULL;
	size_t i;

	if (!cJSON_IsObject(obj))
		return FRAME_ERR_FIELD_TYPE;
	if (d->nfields > FIELDS_MAX)
		return FRAME_ERR_VALUE;
	for (i = 0; i < FIELDS_MAX; i++)
		got[i] = NULL;
	cJSON_ArrayForEach(c, obj) {
		if (d->name != NULL && strcmp(c->string, "t") == 0) {
			if (t != NULL)
				return FRAME_ERR_DUPLICATE_FIELD;
			if (!cJSON_IsString(c))
				return FRAME_ERR_FIELD_TYPE;
			t = c;
			continue;
		}
		for (i = 0; i < d->nfields; i++)
			if (since(d->fields[i].since) <= version &&
			    strcmp(c->string, d->fields[i].name) == 0)
				break;
		if (i == d->nfields)
			return FRAME_ERR_UNKNOWN_FIELD;
		if (got[i] != NULL)
			return FRAME_ERR_DUPLICATE_FIELD;
		got[i] = c;
		if (!json_type_ok(d->fields[i].kind, c))
			return FRAME_ERR_FIELD_TYPE;
	}
	if (d->name != NULL && t == NULL)
		return FRAME_ERR_MISSING_FIELD;
	for (i = 0; i < d->nfields; i++)
		if (since(d->fields[i].since) <= version &&
		    !(d->fields[i].flags & FF_OPTIONAL) && got[i] == NULL)
			return FRAME_ERR_MISSING_FIELD;
	return FRAME_OK;
}

static enum frame_err
get_u64(const cJSON *c, uint64_t *v)
{
	double d = c->valuedouble;

	if (!(d >= 0 && d <= FRAME_INT_MAX) || floor(d) != d)
		return FRAME_ERR_VALUE;
	*v = (uint64_t)d;
	return FRAME_OK;
}

static enum frame_err
get_b64(const cJSON *c, uint8_t *out, size_t n, size_t textlen)
{
	const char *s = c->valuestring;
	size_t got;

	if (strlen(s) != textlen ||
	    sodium_base642bin(out, n, s, textlen, NULL, &got, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 || got != n)
		return FRAME_ERR_VALUE;
	return FRAME_OK;
}

static enum frame_err
get_msgid(const cJSON *c, char *out)
{
	if (!sec_msgid_valid(c->valuestring, NULL))
		return FRAME_ERR_VALUE;
	memcpy(out, c->valuestring, PAPO_MSGID_LEN + 1);
	return FRAME_OK;
}

static enum frame_err
get_list(const struct frame_field *f, const cJSON *arr, unsigned version,
    void *obj)
{
	int n = cJSON_GetArraySize(arr);
	size_t *count = AT(obj, f->n_off, size_t);
	char **v = AT(obj, f->off, char *);
	const cJSON *c;
	enum frame_err e;

	if (n > (int)f->max)
		return FRAME_ERR_TOO_MANY;
	if (n > 0 && (*v = calloc((size_t)n, f->elem_size)) == NULL)
		return FRAME_ERR_NOMEM;
	cJSON_ArrayForEach(c, arr) {
		char *x = *v + *count * f->elem_size;

		if (f->sub != NULL)
			TRY(frame_desc_decode(f->sub, c, version, x));
		else if (!cJSON_IsString(c))
			return FRAME_ERR_FIELD_TYPE;
		else if (f->elem == FK_KEY)
			TRY(sec_id_parse(c->valuestring, (uint8_t *)x) == 0 ?
			    FRAME_OK : FRAME_ERR_VALUE);
		else
			TRY(get_msgid(c, x));
		(*count)++;
	}
	return FRAME_OK;
}

/* Decodes the value c of field f into obj. */
static enum frame_err
get_field(const struct frame_field *f, const cJSON *c, unsigned version,
    void *obj)
{
	void *p = AT(obj, f->off, char);
	const char *s = c->valuestring;
	enum frame_err e;
	uint64_t v;
	size_t n;

	switch (f->kind) {
	case FK_KEY:
		return sec_id_parse(s, p) == 0 ? FRAME_OK : FRAME_ERR_VALUE;
	case FK_MSGID:
		return get_msgid(c, p);
	case FK_TEXT:
		if ((n = strlen(s)) > f->max)
			return f->too_long;
		memcpy(p, s, n + 1);
		return FRAME_OK;
	case FK_BODY:
		if ((n = strlen(s)) > f->max)
			return FRAME_ERR_BODY_LONG;
		if ((*(char **)p = malloc(n + 1)) == NULL)
			return FRAME_ERR_NOMEM;
		memcpy(*(char **)p, s, n + 1);
		*AT(obj, f->n_off, size_t) = n;
		return FRAME_OK;
	case FK_U64:
		return get_u64(c, p);
	case FK_U32:
	case FK_VERSION:
		TRY(get_u64(c, &v));
		/* A hello names the version of its connection; one after 3
		 * changed no frame, and is decoded as 3 (frame_flags). */
		if (v > UINT32_MAX || (f->kind == FK_VERSION && v != version &&
		    !(version == 3 && v > 3 && v <= FRAME_VERSION)))
			return FRAME_ERR_VALUE;
		*(uint32_t *)p = (uint32_t)v;
		return FRAME_OK;
	case FK_FLAG:
		if (c->valuedouble != 1)
			return FRAME_ERR_VALUE;
		*(int *)p = 1;
		return FRAME_OK;
	case FK_ENUM:
		for (int i = 1; f->names[i] != NULL; i++)
			if (strcmp(s, f->names[i]) == 0) {
				*(int *)p = i;
				return FRAME_OK;
			}
		return FRAME_ERR_VALUE;
	case FK_ADDR:
		return addr_parse(s, p) == 0 ? FRAME_OK : FRAME_ERR_VALUE;
	case FK_ADDRS: {
		size_t *count = AT(obj, f->n_off, size_t);
		struct addr *a = p;
		const cJSON *x;

		if (cJSON_GetArraySize(c) > PAPO_ADDR_MAX)
			return FRAME_ERR_TOO_MANY;
		cJSON_ArrayForEach(x, c) {
			if (!cJSON_IsString(x))
				return FRAME_ERR_FIELD_TYPE;
			if (addr_parse(x->valuestring, &a[*count]) == -1)
				return FRAME_ERR_VALUE;
			(*count)++;
		}
		return FRAME_OK;
	}
	case FK_SIG:
		return get_b64(c, p, PAPO_SIG_LEN, FRAME_SIG_B64_LEN);
	case FK_BOX:
		return get_b64(c, p, SEC_BOX_LEN, FRAME_BOX_B64_LEN);
	case FK_LIST:
		return get_list(f, c, version, obj);
	}
	return FRAME_ERR_VALUE;
}

enum frame_err
frame_desc_decode(const struct frame_desc *d, const cJSON *c,
    unsigned version, void *obj)
{
	const cJSON *got[FIELDS_MAX];
	enum frame_err e;

	TRY(match_fields(d, c, version, got));
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *f = &d->fields[i];

		if (got[i] == NULL)
			continue;
		TRY(get_field(f, got[i], version, obj));
		if (f->flags & FF_HAS)
			*AT(obj, f->has_off, int) = 1;
	}
	return FRAME_OK;
}

/* Signatures. */

/* v in width bytes, big-endian: 1, 2, 4 or 8 (test_frame checks that
 * every descriptor says one of them). */
static void
signed_int(struct buf *b, uint64_t v, unsigned width)
{
	if (width == 1)
		buf_u8(b, (uint8_t)v);
	else if (width == 2)
		buf_u16(b, (uint16_t)v);
	else if (width == 4)
		buf_u32(b, (uint32_t)v);
	else
		buf_u64(b, v);
}

static int signed_fields(const struct frame_desc *d, const void *obj,
    struct buf *b);

/* Field f of obj as the signed input has it; -1 for a value that
 * cannot be signed (a message with no body). */
static int
signed_field(const struct frame_field *f, const void *obj, struct buf *b)
{
	const void *p = CAT(obj, f->off, char);

	if (f->flags & FF_OPTIONAL) {
		buf_u8(b, present(f, obj) ? 1 : 0);
		if (!present(f, obj))
			return 0;
	}
	switch (f->kind) {
	case FK_KEY:
		buf_add(b, p, PAPO_KEY_LEN);
		break;
	case FK_MSGID:
		buf_add(b, p, PAPO_MSGID_LEN);
		break;
	case FK_BOX:
		buf_add(b, p, SEC_BOX_LEN);
		break;
	case FK_TEXT: {
		size_t n = strlen(p);

		signed_int(b, n, f->sig_width);
		buf_add(b, p, n);
		break;
	}
	case FK_BODY: {
		size_t n = *CAT(obj, f->n_off, size_t);

		if (*(char *const *)p == NULL)
			return -1;
		signed_int(b, n, f->sig_width);
		buf_add(b, *(char *const *)p, n);
		break;
	}
	case FK_U64:
		signed_int(b, *(const uint64_t *)p, f->sig_width);
		break;
	case FK_U32:
	case FK_VERSION:
		signed_int(b, *(const uint32_t *)p, f->sig_width);
		break;
	case FK_FLAG:
	case FK_ENUM:
		signed_int(b, (uint64_t)*(const int *)p, f->sig_width);
		break;
	case FK_ADDRS: {
		const struct addr *a = p;
		size_t n = *CAT(obj, f->n_off, size_t);

		signed_int(b, n, f->sig_width);
		for (size_t i = 0; i < n && i < PAPO_ADDR_MAX; i++) {
			buf_u8(b, a[i].family);
			buf_add(b, a[i].ip, a[i].family == 4 ? 4 : 16);
			buf_u16(b, a[i].port);
		}
		break;
	}
	case FK_LIST: {
		size_t n = *CAT(obj, f->n_off, size_t);
		const char *v = *(const char *const *)p;

		signed_int(b, n, f->sig_width);
		for (size_t i = 0; i < n; i++) {
			const char *x = v + i * f->elem_size;

			if (f->sub == NULL)
				buf_add(b, x, f->elem == FK_KEY ?
				    PAPO_KEY_LEN : PAPO_MSGID_LEN);
			else if (signed_fields(f->sub, x, b) == -1)
				return -1;
		}
		break;
	}
	case FK_ADDR:
	case FK_SIG:
		return -1;
	}
	return 0;
}

/* obj's signed fields by their place, whatever their JSON order. */
static int
signed_fields(const struct frame_desc *d, const void *obj, struct buf *b)
{
	for (unsigned o = 1; o <= d->nfields; o++)
		for (size_t i = 0; i < d->nfields; i++)
			if (d->fields[i].sig == o &&
			    signed_field(&d->fields[i], obj, b) == -1)
				return -1;
	return 0;
}

int
frame_desc_signed(const struct frame_desc *d, const void *obj,
    const struct room_keys *k, struct buf *b)
{
	if (d->label == NULL)
		return -1;
	buf_add(b, d->label, d->label_len);
	buf_add(b, k->id, sizeof(k->id));
	if (signed_fields(d, obj, b) == -1)
		return -1;
	return b->toobig ? -1 : 0;
}

int
frame_desc_signed_at(const struct frame_desc *d, const void *obj, size_t i,
    const struct room_keys *k, struct buf *b)
{
	if (d->label != NULL)
		return i == 0 && present(&d->fields[d->sig], obj) ?
		    frame_desc_signed(d, obj, k, b) : -1;
	for (size_t j = 0; j < d->nfields; j++) {
		const struct frame_field *f = &d->fields[j];

		if (f->kind == FK_LIST && f->sub != NULL &&
		    f->sub->label != NULL)
			return i < *CAT(obj, f->n_off, size_t) ?
			    frame_desc_signed_at(f->sub, *CAT(obj, f->off, char *) + i * f->elem_size, 0, k, b) : -1;
	}
	return -1;
}

int
frame_desc_sign(const struct frame_desc *d, void *obj,
    const struct room_keys *k, const struct identity *id)
{
	const struct frame_field *sig = &d->fields[d->sig];
	struct buf b;
	int rc = -1;

	memcpy(AT(obj, d->fields[d->signer].off, uint8_t), id->pk,
	    PAPO_KEY_LEN);
	if (sig->flags & FF_HAS)
		*AT(obj, sig->has_off, int) = 0;
	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if ((!d->sign_checked || frame_desc_check(d, obj) == FRAME_OK) &&
	    frame_desc_signed(d, obj, k, &b) == 0 &&
	    crypto_sign_detached(AT(obj, sig->off, uint8_t), NULL, b.p, b.len,
	    id->sk) == 0) {
		rc = 0;
		if (sig->flags & FF_HAS)
			*AT(obj, sig->has_off, int) = 1;
	}
	buf_free(&b);
	return rc;
}

/* Counted for tests (frame_verifies): that a copy already held costs
 * no check is something a test can see. */
static _Atomic unsigned long verifies;

unsigned long
frame_verifies(void)
{
	return verifies;
}

enum frame_err
frame_desc_verify(const struct frame_desc *d, const void *obj,
    const struct room_keys *k)
{
	enum frame_err e = FRAME_OK;
	struct buf b;

	buf_init(&b, FRAME_SIG_INPUT_MAX);
	if (d->label != NULL && present(&d->fields[d->sig], obj) &&
	    ++verifies > 0 && (frame_desc_signed(d, obj, k, &b) == -1 ||
	    crypto_sign_verify_detached(CAT(obj, d->fields[d->sig].off,
	    uint8_t), b.p, b.len, CAT(obj, d->fields[d->signer].off,
	    uint8_t)) != 0))
		e = FRAME_ERR_SIGNATURE;
	buf_free(&b);
	/* Nested objects signed on their own (a peers entry by the member
	 * it is about): one forged entry refuses the frame. */
	for (size_t i = 0; i < d->nfields && e == FRAME_OK; i++) {
		const struct frame_field *f = &d->fields[i];

		if (f->kind != FK_LIST || f->sub == NULL)
			continue;
		for (size_t j = 0; j < *CAT(obj, f->n_off, size_t) &&
		    e == FRAME_OK; j++)
			e = frame_desc_verify(f->sub, *CAT(obj, f->off, char *) + j * f->elem_size, k);
	}
	return e;
}

/* Versions and memory. */

int
frame_desc_for_version(const struct frame_desc *d, void *obj,
    unsigned version, void *v)
{
	if (since(d->since) > version)
		return -1;
	/* An object that names its version (a hello) is sent as it is. */
	if (version_field(d) != NULL)
		return 0;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *f = &d->fields[i];

		if (since(f->since) > version) {
			/* Not this version's: it leaves the object. */
			if (f->flags & FF_HAS)
				*AT(obj, f->has_off, int) = 0;
			else if (f->flags & FF_NONZERO)
				clear_value(f, obj);
		} else if (!(f->flags & FF_OPTIONAL) && !present(f, obj)) {
			/* This version's, and it has none. */
			return -1;
		} else if (f->kind == FK_LIST && (f->flags & FF_FILTER)) {
			size_t *n = AT(obj, f->n_off, size_t), kept = 0;
			char **list = AT(obj, f->off, char *);

			for (size_t j = 0; j < *n && j < f->max; j++) {
				char *x = (char *)v + kept * f->elem_size;

				memcpy(x, *list + j * f->elem_size,
				    f->elem_size);
				if (frame_desc_for_version(f->sub, x, version,
				    NULL) == 0)
					kept++;
			}
			*list = v;
			*n = kept;
			if (kept == 0)
				return -1;
		}
	}
	return 0;
}

void
frame_desc_free(const struct frame_desc *d, void *obj)
{
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *f = &d->fields[i];
		char **p = AT(obj, f->off, char *);

		if (f->kind == FK_BODY) {
			free(*p);
			*p = NULL;
		} else if (f->kind == FK_LIST) {
			if (f->sub != NULL && *p != NULL)
				for (size_t j = 0; j < *AT(obj, f->n_off,
				    size_t); j++)
					frame_desc_free(f->sub,
					    *p + j * f->elem_size);
			free(*p);
			*p = NULL;
		}
	}
}
