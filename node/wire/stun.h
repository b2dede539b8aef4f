/*
 * stun.h: the STUN message codec (RFC 8489) as TURN (RFC 8656) uses it:
 * the 20-byte header, attributes, XOR addresses, MESSAGE-INTEGRITY
 * (HMAC-SHA1) and FINGERPRINT (CRC-32).  Pure: bytes in, structs or a
 * typed error out, no I/O, no clock; any thread.  docs/PROTOCOL.md, "TURN
 * client", says which messages and attributes papo sends and accepts.
 */
#ifndef PAPO_STUN_H
#define PAPO_STUN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/addr.h"

#define STUN_HDR 20
#define STUN_COOKIE 0x2112a442u
#define STUN_TID_LEN 12
#define STUN_ATTRS_MAX 32      /* attributes kept from one message */
#define STUN_MI_LEN 20         /* HMAC-SHA1 */

/* Methods and classes (RFC 8489 section 5, RFC 8656 section 17). */
enum stun_method {
	STUN_BINDING = 0x001,
	STUN_ALLOCATE = 0x003,
	STUN_REFRESH = 0x004,
	STUN_SEND = 0x006,
	STUN_DATA = 0x007,
	STUN_CREATE_PERMISSION = 0x008,
	STUN_CHANNEL_BIND = 0x009,
};

enum stun_class {
	STUN_REQUEST = 0,
	STUN_INDICATION = 1,
	STUN_SUCCESS = 2,
	STUN_ERROR = 3,
};

enum stun_attr_type {
	STUN_A_MAPPED_ADDRESS = 0x0001,
	STUN_A_USERNAME = 0x0006,
	STUN_A_MESSAGE_INTEGRITY = 0x0008,
	STUN_A_ERROR_CODE = 0x0009,
	STUN_A_UNKNOWN_ATTRIBUTES = 0x000a,
	STUN_A_CHANNEL_NUMBER = 0x000c,
	STUN_A_LIFETIME = 0x000d,
	STUN_A_XOR_PEER_ADDRESS = 0x0012,
	STUN_A_DATA = 0x0013,
	STUN_A_REALM = 0x0014,
	STUN_A_NONCE = 0x0015,
	STUN_A_XOR_RELAYED_ADDRESS = 0x0016,
	STUN_A_REQUESTED_ADDRESS_FAMILY = 0x0017,
	STUN_A_EVEN_PORT = 0x0018,
	STUN_A_REQUESTED_TRANSPORT = 0x0019,
	STUN_A_DONT_FRAGMENT = 0x001a,
	STUN_A_MESSAGE_INTEGRITY_SHA256 = 0x001c,
	STUN_A_PASSWORD_ALGORITHM = 0x001d,
	STUN_A_USERHASH = 0x001e,
	STUN_A_XOR_MAPPED_ADDRESS = 0x0020,
	STUN_A_RESERVATION_TOKEN = 0x0022,
	STUN_A_SOFTWARE = 0x8022,
	STUN_A_FINGERPRINT = 0x8028,
};

/* Why a datagram is not a STUN message papo accepts. */
enum stun_err {
	STUN_OK = 0,
	STUN_E_SHORT,          /* fewer than 20 bytes */
	STUN_E_NOT_STUN,       /* top bits set, or no magic cookie */
	STUN_E_LENGTH,         /* header length not the datagram's, or not
	                        * a multiple of 4 */
	STUN_E_ATTR,           /* an attribute or its padding runs past the
	                        * end, or has the wrong size for its type */
	STUN_E_TOO_MANY,       /* more than STUN_ATTRS_MAX attributes */
	STUN_E_FINGERPRINT,    /* wrong CRC, or anything after FINGERPRINT */
};

struct stun_attr {
	uint16_t type;
	uint16_t len;
	const uint8_t *v;      /* into the decoded bytes */
};

/* A decoded message; points into the bytes it was decoded from. */
struct stun_msg {
	uint16_t method;
	uint8_t cls;           /* enum stun_class */
	uint8_t tid[STUN_TID_LEN];
	const uint8_t *raw;
	size_t len;
	struct stun_attr a[STUN_ATTRS_MAX];   /* before MESSAGE-INTEGRITY */
	size_t na;
	size_t mi_off;         /* offset of MESSAGE-INTEGRITY, 0: none */
	int fingerprint;       /* had one (and it was right) */
	uint16_t unknown;      /* first comprehension-required attribute
	                        * papo does not know, 0: none */
};

/* Decodes one datagram.  FINGERPRINT, when present, is checked here;
 * MESSAGE-INTEGRITY needs the key (stun_check_integrity).  Attributes
 * after MESSAGE-INTEGRITY other than FINGERPRINT are skipped, as RFC 8489
 * section 14.5 asks. */
enum stun_err stun_decode(struct stun_msg *m, const uint8_t *p, size_t n);
const char *stun_strerror(enum stun_err e);
/* The first attribute of type, or NULL. */
const struct stun_attr *stun_get(const struct stun_msg *m, uint16_t type);
/* 0 when m carries a MESSAGE-INTEGRITY that key makes, -1 otherwise. */
int stun_check_integrity(const struct stun_msg *m, const uint8_t *key,
    size_t keylen);
/* An (XOR-)address attribute: 0 and *out, or -1 when malformed. */
int stun_xaddr(const struct stun_msg *m, const struct stun_attr *a,
    struct addr *out);
/* ERROR-CODE: the code (300..699) and its reason phrase (not
 * terminated); -1 when malformed. */
int stun_error_code(const struct stun_attr *a, int *code,
    const uint8_t **reason, size_t *reasonlen);
/* A 4-byte attribute (LIFETIME, CHANNEL-NUMBER's first half...). */
int stun_u32(const struct stun_attr *a, uint32_t *v);

/*
 * The writer: a message built in a buffer the caller owns.  Each add
 * that does not fit sets bad and is dropped; stun_end returns the length
 * or 0 when anything was dropped.  MESSAGE-INTEGRITY and FINGERPRINT go
 * last, in that order, and each covers all before it.
 */
struct stun_out {
	uint8_t *p;
	size_t cap, len;
	int bad;
};

void stun_begin(struct stun_out *o, uint8_t *p, size_t cap, uint16_t method,
    uint8_t cls, const uint8_t tid[STUN_TID_LEN]);
void stun_add(struct stun_out *o, uint16_t type, const void *v, size_t n);
void stun_add_u32(struct stun_out *o, uint16_t type, uint32_t v);
void stun_add_xaddr(struct stun_out *o, uint16_t type, const struct addr *a);
void stun_add_integrity(struct stun_out *o, const uint8_t *key,
    size_t keylen);
void stun_add_fingerprint(struct stun_out *o);
size_t stun_end(struct stun_out *o);

/* CRC-32 (ISO-HDLC, as in zlib) of p. */
uint32_t stun_crc32(const uint8_t *p, size_t n);
/* The long-term credential key: MD5(user ":" realm ":" pass). */
int stun_lt_key(const char *user, const char *realm, size_t realmlen,
    const char *pass, uint8_t key[16]);

#endif
