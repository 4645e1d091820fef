/*
 * hpack.h: HPACK (RFC 7541) header compression, the one public header.
 *
 * A C ABI over a C++ implementation.  No exception, C++ type or global state
 * crosses this boundary; every function is safe to call from C.
 *
 * Objects
 *   hpack_decoder_t  one per connection, decodes the peer's header blocks.
 *   hpack_encoder_t  one per connection, encodes our header blocks with the
 *                    full dynamic table.
 *   hpack_policy_t   immutable once built, shared by many encoders: which
 *                    fields are never indexed and which are indexed only
 *                    when they recur.
 *
 * Memory
 *   Every byte of state comes from the hpack_allocator_t given at creation
 *   (so a host can place it in a connection's memory pool).  The free
 *   callback may be a no-op when the memory is released in bulk.  Memory is
 *   bounded by the table sizes and limits given by the caller; in steady
 *   state (after the tables and scratch buffers have reached the sizes the
 *   peer's traffic needs) encoding and decoding allocate nothing.
 *
 * Threads
 *   An object is used by one thread at a time.  A policy may be read by any
 *   number of threads once built.
 *
 * Errors
 *   Functions that can fail return an int: 0 or a positive status on
 *   success, a negative hpack_error on failure.  hpack_h2_error() maps an
 *   error to the HTTP/2 error code a connection should be closed with;
 *   hpack_strerror() gives a short text for logs.  After a decoder error the
 *   decoder's table may be out of sync with the peer: the connection must be
 *   closed (RFC 7540 section 4.3).
 */

#ifndef HPACK_H
#define HPACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HPACK_VERSION_MAJOR  1
#define HPACK_VERSION_MINOR  0

/* The size of a dynamic-table entry: name + value + 32 (RFC 7541 4.1). */
#define HPACK_ENTRY_OVERHEAD  32

/* RFC 7540 6.5.2: the initial SETTINGS_HEADER_TABLE_SIZE. */
#define HPACK_DEFAULT_TABLE_SIZE  4096

/* The largest table size this library accepts from either side (1 MiB). */
#define HPACK_MAX_TABLE_SIZE  (1u << 20)


/* ---------------------------------------------------------------- status */

enum hpack_status {
    HPACK_OK         = 0,   /* fields were decoded / the call succeeded */
    HPACK_BLOCK_END  = 1,   /* the header block is complete, no field */
    HPACK_NEED_MORE  = 2    /* the piece was consumed; give the next one */
};

enum hpack_error {
    /* the peer's block is malformed: HTTP/2 COMPRESSION_ERROR */
    HPACK_E_INTEGER          = -1,  /* integer longer than four octets */
    HPACK_E_TRUNCATED        = -2,  /* block ends inside a representation */
    HPACK_E_INDEX            = -3,  /* index 0 or past the end of the table */
    HPACK_E_HUFFMAN_EOS      = -4,  /* EOS symbol inside a Huffman string */
    HPACK_E_HUFFMAN_PADDING  = -5,  /* padding > 7 bits or not all ones */
    HPACK_E_UPDATE_POSITION  = -6,  /* size update after a field (4.2) */
    HPACK_E_UPDATE_SIZE      = -7,  /* size update above the settings */
    HPACK_E_UPDATE_MISSING   = -8,  /* settings shrank, no update came (4.2) */

    /* the peer exceeded a caller-set limit: HTTP/2 ENHANCE_YOUR_CALM */
    HPACK_E_FIELD_TOO_LARGE  = -20, /* one field above max_field_size */
    HPACK_E_LIST_TOO_LARGE   = -21, /* decoded list above max_list_size */
    HPACK_E_STRING_TOO_LARGE = -22, /* a string literal's coded length
                                       above the string limit */

    /* our side: HTTP/2 INTERNAL_ERROR */
    HPACK_E_NOMEM            = -30, /* the allocator returned NULL */
    HPACK_E_BUFFER           = -31, /* output buffer smaller than the bound */
    HPACK_E_ARGUMENT         = -32, /* invalid argument (size, NULL, ...) */
    HPACK_E_STATE            = -33  /* call out of order, or object failed */
};

/* HTTP/2 error codes (RFC 7540 section 7) returned by hpack_h2_error(). */
#define HPACK_H2_NO_ERROR            0x0
#define HPACK_H2_INTERNAL_ERROR      0x2
#define HPACK_H2_COMPRESSION_ERROR   0x9
#define HPACK_H2_ENHANCE_YOUR_CALM   0xb

/* The HTTP/2 error code for a result: NO_ERROR for rc >= 0,
 * COMPRESSION_ERROR for a malformed block, ENHANCE_YOUR_CALM for a limit,
 * INTERNAL_ERROR for anything on our side. */
unsigned hpack_h2_error(int rc);

/* A static, human-readable description of rc ("Huffman padding longer than
 * 7 bits or not all ones", ...).  Never NULL. */
const char *hpack_strerror(int rc);


/* ------------------------------------------------------------- allocator */

typedef struct hpack_allocator {
    /* Returns size bytes aligned for any type, or NULL. */
    void  *(*alloc)(void *ctx, size_t size);
    /* Releases a block returned by alloc; may be a no-op.  Never called with
     * NULL. */
    void   (*free)(void *ctx, void *ptr);
    void    *ctx;
} hpack_allocator_t;

/* Passing NULL where an allocator is expected selects malloc/free. */


/* ------------------------------------------------------------ Huffman */

/* The exact length of the Huffman code of src[0..len) in octets. */
size_t hpack_huffman_encoded_len(const uint8_t *src, size_t len);

/* Writes exactly hpack_huffman_encoded_len(src, len) octets to dst, which
 * must have room for that many.  Returns the number written. */
size_t hpack_huffman_encode(const uint8_t *src, size_t len, uint8_t *dst);

/* The capacity dst needs for hpack_huffman_decode() of len coded octets:
 * len * 8 / 5 (the shortest code is 5 bits) plus a small constant slack for
 * whole-word stores. */
size_t hpack_huffman_decode_capacity(size_t len);

/* Decodes len coded octets into dst (hpack_huffman_decode_capacity(len)
 * octets of room).  Returns the decoded length, or HPACK_E_HUFFMAN_EOS or
 * HPACK_E_HUFFMAN_PADDING (RFC 7541 5.2). */
ptrdiff_t hpack_huffman_decode(const uint8_t *src, size_t len, uint8_t *dst);


/* -------------------------------------------------------------- decoder */

typedef struct hpack_decoder hpack_decoder_t;

/* How a field was represented on the wire (RFC 7541 6.1, 6.2). */
typedef enum {
    HPACK_REP_INDEXED          = 0,
    HPACK_REP_INCREMENTAL      = 1,   /* literal, entered into the table */
    HPACK_REP_WITHOUT_INDEXING = 2,
    HPACK_REP_NEVER_INDEXED    = 3    /* intermediaries must keep it so */
} hpack_representation_t;

/* Per dynamic-table entry storage owned by the host: zeroed when the entry
 * is inserted, kept unchanged while the entry lives, dropped with it.  The
 * host keeps there what it derives from a field once (validation outcome,
 * name hash, handler lookup) and reuses on every indexed reference.  A
 * field's pointer to it is valid as long as the field's name and value
 * (the decoder may move the memo with its entry later). */
#define HPACK_MEMO_SIZE  32

typedef union hpack_memo {
    uint8_t   bytes[HPACK_MEMO_SIZE];
    uint64_t  words[HPACK_MEMO_SIZE / 8];
    void     *align_ptr;
} hpack_memo_t;

typedef struct hpack_field {
    const uint8_t           *name;
    size_t                   name_len;
    const uint8_t           *value;
    size_t                   value_len;

    hpack_representation_t   representation;

    /* The table index the field (indexed) or its name (literal with an
     * indexed name) referred to, as it stood when referenced; 0 for a
     * literal name. */
    uint32_t                 index;

    /* 1..61 when the field (indexed) or its name comes from the static
     * table, else 0.  Lets the host keep per-static-entry precomputation. */
    uint32_t                 static_index;

    /* The memo of the dynamic entry this field is: the referenced entry for
     * an indexed field, the new entry for HPACK_REP_INCREMENTAL (zeroed).
     * NULL otherwise, and NULL for an HPACK_REP_INCREMENTAL field too large
     * to enter the table (which empties it, RFC 7541 4.4). */
    hpack_memo_t            *memo;

    /* The memo of the dynamic entry the name was taken from (a literal with
     * an indexed dynamic name; equal to memo for an indexed field), or NULL:
     * lets the host reuse name-only facts (hash, handler).  NULL when the
     * insertion of this very field evicted that entry. */
    const hpack_memo_t      *name_memo;
} hpack_field_t;

typedef struct hpack_stats {
    uint64_t  blocks;             /* header blocks completed */
    uint64_t  fields;             /* fields decoded / encoded */
    uint64_t  indexed_static;     /* fully indexed fields, static table */
    uint64_t  indexed_dynamic;    /* fully indexed fields, dynamic table */
    uint64_t  name_indexed;       /* literals with an indexed name */
    uint64_t  literal_names;      /* literals with a literal name */
    uint64_t  insertions;         /* entries added to the dynamic table */
    uint64_t  evictions;          /* entries evicted */
    uint64_t  wire_bytes;         /* encoded octets (input or output) */
    uint64_t  plain_bytes;        /* sum of name_len + value_len of fields */
    uint64_t  huffman_strings;    /* string literals in Huffman form */
    uint64_t  raw_strings;        /* string literals in raw form */
    uint64_t  size_updates;       /* dynamic table size updates */
} hpack_stats_t;

/* Creates a decoder.  settings_table_size is our SETTINGS_HEADER_TABLE_SIZE
 * (4096 unless the host advertises another; at most HPACK_MAX_TABLE_SIZE):
 * the peer's size updates may not exceed it.  Limits start unbounded; set
 * them with hpack_decoder_set_limits().  NULL on allocation failure or a
 * bad size. */
hpack_decoder_t *hpack_decoder_create(const hpack_allocator_t *allocator,
    size_t settings_table_size);

/* Releases the decoder and everything it allocated.  NULL is ignored. */
void hpack_decoder_destroy(hpack_decoder_t *dec);

/* Bounds per header block, checked before any byte of a field is decoded
 * or copied (indexed references count in full, so a small block that
 * references a large entry many times is caught: an HPACK bomb).
 *   max_field_size  name_len + value_len of one field;
 *   max_list_size   sum over the block of name_len + value_len + 32
 *                   (the SETTINGS_MAX_HEADER_LIST_SIZE measure).
 * 0 means unbounded.  Takes effect at the next field. */
void hpack_decoder_set_limits(hpack_decoder_t *dec, size_t max_field_size,
    size_t max_list_size);

/* Bounds the coded length (as sent, before Huffman decoding) of every
 * string literal, checked as soon as its length prefix is read:
 * HPACK_E_STRING_TOO_LARGE.  0 means unbounded (the default).  For hosts
 * whose limits are defined on the wire (nginx's large_client_header_buffers
 * size applies to each string as sent). */
void hpack_decoder_set_string_limit(hpack_decoder_t *dec, size_t max_coded_len);

/* Our SETTINGS_HEADER_TABLE_SIZE changed (call when the peer acknowledged
 * it).  If it shrank below the current table size, the peer's next block
 * must start with a size update no larger than it (else
 * HPACK_E_UPDATE_MISSING).  HPACK_OK or HPACK_E_ARGUMENT. */
int hpack_decoder_set_settings_table_size(hpack_decoder_t *dec, size_t size);

/* Starts a new header block.  Must be called before the first
 * hpack_decode_fields() of every block; resets the list-size accounting. */
void hpack_decode_begin(hpack_decoder_t *dec);

/* Decodes the next fields of the current block from the piece [*pos, end)
 * into fields[0..max_fields).  A block may arrive in any number of pieces
 * (reads, CONTINUATION frames); last is non-zero for its final piece.
 * *pos is advanced over what was consumed; *n_fields gets the number of
 * fields written, whatever the result.  The fields' names and values all
 * stay valid until the next call on this decoder, or until the piece they
 * may point into is released, whichever comes first; their memos stay
 * each entry's own.
 *
 * Returns
 *   HPACK_OK          *n_fields >= 1 fields; call again for more.  A call
 *                     may return fewer than max_fields even though the
 *                     block goes on (a field that would have moved what
 *                     earlier fields point at is left for the next call).
 *   HPACK_NEED_MORE   *n_fields fields (maybe none), then the piece was
 *                     fully consumed (a partial representation is kept
 *                     inside the decoder); call again with the next piece.
 *                     Only when last is 0.
 *   HPACK_BLOCK_END   *n_fields fields (maybe none), then the block ended
 *                     (last is set).
 *   < 0               an hpack_error after *n_fields valid fields; the
 *                     decoder is no longer usable.  Except
 *                     HPACK_E_ARGUMENT for max_fields == 0, which changes
 *                     nothing.
 *
 * Dynamic-table size updates are applied silently (they are only accepted
 * before the first field of a block). */
int hpack_decode_fields(hpack_decoder_t *dec, const uint8_t **pos,
    const uint8_t *end, int last, hpack_field_t *fields, size_t max_fields,
    size_t *n_fields);

/* Current dynamic table: size in the RFC measure, and number of entries. */
size_t hpack_decoder_table_size(const hpack_decoder_t *dec);
size_t hpack_decoder_table_entries(const hpack_decoder_t *dec);

/* Counters since creation. */
void hpack_decoder_stats(const hpack_decoder_t *dec, hpack_stats_t *stats);


/* --------------------------------------------------------------- policy */

typedef struct hpack_policy hpack_policy_t;

/* Never index: sent as "literal never indexed" (RFC 7541 7.1.3). */
#define HPACK_POLICY_NEVER_INDEX  0x1
/* Volatile: indexed only when the same name and value recur within the
 * encoder's recent history; otherwise "literal without indexing". */
#define HPACK_POLICY_VOLATILE     0x2

/* Creates a policy with the built-in lists:
 *   never indexed: authorization, proxy-authorization, and cookie and
 *     set-cookie values shorter than 20 octets (guessable secrets);
 *   volatile: content-length, date, etag, last-modified, expires, age,
 *     :path, location, if-none-match, if-modified-since, x-request-id,
 *     x-correlation-id, request-id, traceparent, x-amzn-trace-id,
 *     content-range, set-cookie (long), cookie (long).
 * NULL on allocation failure. */
hpack_policy_t *hpack_policy_create(const hpack_allocator_t *allocator);

/* Adds a lowercase name to a list (flags: HPACK_POLICY_*).  Must not be
 * called once the policy is used by an encoder.  HPACK_OK, HPACK_E_NOMEM or
 * HPACK_E_ARGUMENT (empty name, unknown flag). */
int hpack_policy_add(hpack_policy_t *policy, const char *name, size_t len,
    unsigned flags);

/* The flags the policy gives a name (0 for none). */
unsigned hpack_policy_lookup(const hpack_policy_t *policy, const char *name,
    size_t len);

void hpack_policy_destroy(hpack_policy_t *policy);


/* -------------------------------------------------------------- encoder */

typedef struct hpack_encoder hpack_encoder_t;

/* Per-field flags for hpack_header_t. */
#define HPACK_FIELD_NEVER_INDEX  0x1   /* sensitive: never indexed */
#define HPACK_FIELD_NO_INDEX     0x2   /* do not add to the table */

typedef struct hpack_header {
    const uint8_t  *name;        /* lowercase, non-empty */
    size_t          name_len;
    const uint8_t  *value;
    size_t          value_len;
    /* Optional: the value already in its shortest literal string form
     * (hpack_string_encode() output, length prefix included), for values
     * that are known in advance (configuration constants): re-sending such
     * a value costs a copy.  NULL when not available. */
    const uint8_t  *value_literal;
    size_t          value_literal_len;
    unsigned        flags;       /* HPACK_FIELD_* */
} hpack_header_t;

/* Creates an encoder.
 *   max_table_size  our cap on the dynamic table (at most
 *                   HPACK_MAX_TABLE_SIZE); the table used is the smaller of
 *                   it and the peer's SETTINGS_HEADER_TABLE_SIZE (4096 until
 *                   told otherwise).
 *   policy          may be NULL for the built-in policy; must outlive the
 *                   encoder.
 * NULL on allocation failure or a bad size. */
hpack_encoder_t *hpack_encoder_create(const hpack_allocator_t *allocator,
    size_t max_table_size, const hpack_policy_t *policy);

void hpack_encoder_destroy(hpack_encoder_t *enc);

/* The peer's SETTINGS_HEADER_TABLE_SIZE (call when the SETTINGS frame is
 * processed, before encoding any block that will be sent after its ACK).
 * The next block starts with the required size update(s): the smallest size
 * reached since the last block, then the final one, when they differ
 * (RFC 7541 4.2).  HPACK_OK or HPACK_E_ARGUMENT. */
int hpack_encoder_set_peer_table_size(hpack_encoder_t *enc, size_t size);

/* The room hpack_encode() is always given enough by: an upper bound of the
 * encoded size of a block of n headers whose name_len + value_len +
 * value_literal_len add up to octets, which a host can sum as it builds
 * its fields.  The block's part covers two size updates and the overrun of
 * whole-word Huffman stores; each field's, its representation's integer
 * and two length prefixes. */
#define HPACK_BLOCK_BOUND   84
#define HPACK_FIELD_BOUND   18
#define HPACK_ENCODE_BOUND(n, octets)                                        \
    (HPACK_BLOCK_BOUND + HPACK_FIELD_BOUND * (size_t) (n) + (size_t) (octets))

/* Encodes one header block into out (out_cap octets;
 * HPACK_ENCODE_BOUND() is always enough).  hpack_encode() checks out_cap
 * against a bound of its own, never above HPACK_ENCODE_BOUND(): below it
 * HPACK_E_BUFFER is returned and the encoder is unchanged (out may have
 * been written to), as it is after HPACK_E_ARGUMENT.  On HPACK_OK *out_len
 * is the block length.  Blocks must reach the peer in the order they were
 * encoded. */
int hpack_encode(hpack_encoder_t *enc, const hpack_header_t *headers,
    size_t n, uint8_t *out, size_t out_cap, size_t *out_len);

/* The shortest literal string form of src (length prefix with its H bit,
 * then the raw or Huffman octets): its exact length, and the encoding into
 * dst (room for hpack_string_encoded_len() octets).  Huffman is chosen only
 * when strictly shorter. */
size_t hpack_string_encoded_len(const uint8_t *src, size_t len);
size_t hpack_string_encode(const uint8_t *src, size_t len, uint8_t *dst);

size_t hpack_encoder_table_size(const hpack_encoder_t *enc);
size_t hpack_encoder_table_entries(const hpack_encoder_t *enc);
void hpack_encoder_stats(const hpack_encoder_t *enc, hpack_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif /* HPACK_H */
