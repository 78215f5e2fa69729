#!/usr/bin/env python3
"""Generate testdata/wire_vectors.json: shared test vectors for the ACP v1 wire format.

The byte strings are built here from the layout in docs/PROTOCOL.md with `struct`, independently
of the Rust implementation (crates/acp-core/src/wire.rs), so that the Rust test
`crates/acp-core/tests/wire_vectors.rs` -- and any other implementation -- can check itself
against them. Standard library only.

Usage (from anywhere):  python3 testdata/gen_wire_vectors.py
Writes wire_vectors.json next to this script. The output is deterministic; re-running it must not
change the committed file (`git diff --exit-code testdata/`).
"""

import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "wire_vectors.json")
PROTOCOL_MD = os.path.join(HERE, "..", "docs", "PROTOCOL.md")

# ---- Layout from docs/PROTOCOL.md, "Common fixed part (44 bytes)" --------------------------------
#   0..2 magic "AC" | 2 version | 3 type | 4 flags | 5 reserved / key id | 6..8 length (u16)
#   8..16 session | 16..24 sequence | 24..32 generation ts | 32..40 acked seq / rx ts
#   40..44 hold (u32) | 44.. payload / feedback TLVs [| 16-byte tag when AUTH].  All big-endian.
#   COOKIE: bytes 32..44 are the 12-byte cookie, no body.  UPDATE with flag COOKIE: the body is
#   the 12-byte cookie, then the payload.
FIXED = struct.Struct(">2sBBBBHQQQQI")
assert FIXED.size == 44

MAGIC = b"AC"
VERSION = 1
TYPE_UPDATE = 0x01
TYPE_ACK = 0x02
TYPE_COOKIE = 0x03
FLAG_PROBE = 0x01  # UPDATE bit 0
FLAG_COOKIE = 0x02  # UPDATE bit 1
FLAG_MULTIPATH = 0x04  # UPDATE bit 2 (multipath extension): one session over several paths
FLAG_STALE = 0x01  # ACK bit 0
FLAG_AUTH = 0x80  # any type, bit 7: byte 5 is the key id, a tag follows the body
COOKIE_LEN = 12
TAG_LEN = 16
# Defined flags per type ("Common fixed part", byte 4); AUTH is defined on every type.
DEFINED_FLAGS = {TYPE_UPDATE: FLAG_PROBE | FLAG_COOKIE | FLAG_MULTIPATH | FLAG_AUTH,
                 TYPE_ACK: FLAG_STALE | FLAG_AUTH,
                 TYPE_COOKIE: FLAG_AUTH}
# Stand-in for a seal's tag in framing-only cases: these vectors never make a tag valid (real
# seals are in auth_vectors.json, made by gen_auth_vectors.py).
FAKE_TAG = bytes(range(0xE0, 0xF0))
assert len(FAKE_TAG) == TAG_LEN

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1
SEC = 1_000_000_000


def raw(*, magic=MAGIC, version=VERSION, ptype, flags=0, reserved=0, length=None, session=0,
        seq=0, gen_ts=0, word4=0, hold=0, body=b"", tag=b""):
    """Packs a datagram; every field can be overridden to build malformed cases. `length`
    defaults to the body's size: a `tag` appended after the body is not counted."""
    if length is None:
        length = len(body)
    return FIXED.pack(magic, version, ptype, flags, reserved, length, session, seq, gen_ts, word4,
                      hold) + body + tag


def cookie_words(cookie):
    """A COOKIE carries its cookie in bytes 32..44: the u64 word at 32..40 and the u32 at 40..44."""
    assert len(cookie) == COOKIE_LEN
    word4, hold = struct.unpack(">QI", cookie)
    return word4, hold


def sealed_framing(flags, key_id):
    """(reserved byte, tag) for a case: with AUTH, byte 5 is the key id and FAKE_TAG follows."""
    if flags & FLAG_AUTH:
        return key_id, FAKE_TAG
    assert key_id is None
    return 0, b""


def tlvs(items):
    """Feedback area from [(kind, value_bytes)]: kind (1 byte) | len (1 byte) | value."""
    out = b""
    for kind, value in items:
        assert 0 <= kind <= 255 and len(value) <= 255
        out += struct.pack(">BB", kind, len(value)) + value
    return out


CASES = []


def valid_update(name, *, flags=0, session, seq, gen_ts, acked_seq, hold_ns, payload, cookie=None,
                 key_id=None, note=None):
    """A valid UPDATE; `flags` is the flags byte on the wire (FLAG_COOKIE iff `cookie`)."""
    assert bool(flags & FLAG_COOKIE) == (cookie is not None)
    reserved, tag = sealed_framing(flags, key_id)
    data = raw(ptype=TYPE_UPDATE, flags=flags, reserved=reserved, session=session, seq=seq,
               gen_ts=gen_ts, word4=acked_seq, hold=hold_ns, body=(cookie or b"") + payload,
               tag=tag)
    case = {"name": name}
    if note:
        case["note"] = note
    case["hex"] = data.hex()
    case["packet"] = {
        "type": "update",
        "flags": flags,
        "session": str(session),
        "seq": str(seq),
        "gen_ts": str(gen_ts),
        "acked_seq": str(acked_seq),
        "hold_ns": hold_ns,
        "payload_hex": payload.hex(),
    }
    if cookie is not None:
        case["packet"]["cookie_hex"] = cookie.hex()
    if key_id is not None:
        case["packet"]["key_id"] = key_id
    CASES.append(case)
    return data


def valid_ack(name, *, flags=0, session, seq, gen_ts, rx_ts, hold_ns, feedback, key_id=None,
              note=None):
    body = tlvs(feedback)
    reserved, tag = sealed_framing(flags, key_id)
    data = raw(ptype=TYPE_ACK, flags=flags, reserved=reserved, session=session, seq=seq,
               gen_ts=gen_ts, word4=rx_ts, hold=hold_ns, body=body, tag=tag)
    case = {"name": name}
    if note:
        case["note"] = note
    case["hex"] = data.hex()
    case["packet"] = {
        "type": "ack",
        "flags": flags,
        "session": str(session),
        "seq": str(seq),
        "gen_ts": str(gen_ts),
        "rx_ts": str(rx_ts),
        "hold_ns": hold_ns,
        "feedback_hex": body.hex(),
        "feedback": [{"kind": k, "value_hex": v.hex()} for k, v in feedback],
    }
    if key_id is not None:
        case["packet"]["key_id"] = key_id
    CASES.append(case)
    return data


def valid_cookie(name, *, flags=0, session, seq, gen_ts, cookie, key_id=None, note=None):
    reserved, tag = sealed_framing(flags, key_id)
    word4, hold = cookie_words(cookie)
    data = raw(ptype=TYPE_COOKIE, flags=flags, reserved=reserved, session=session, seq=seq,
               gen_ts=gen_ts, word4=word4, hold=hold, tag=tag)
    case = {"name": name}
    if note:
        case["note"] = note
    case["hex"] = data.hex()
    case["packet"] = {
        "type": "cookie",
        "flags": flags,
        "session": str(session),
        "seq": str(seq),
        "gen_ts": str(gen_ts),
        "cookie_hex": cookie.hex(),
    }
    if key_id is not None:
        case["packet"]["key_id"] = key_id
    CASES.append(case)
    return data


def malformed(name, data, error, note):
    CASES.append({"name": name, "note": note, "hex": data.hex(), "error": error})


# ---- Worked examples (docs/PROTOCOL.md, "Worked example"), copied verbatim from the document ----
DOC_UPDATE_HEX = """
41 43 01 01 00 00 00 02  01 23 45 67 89 ab cd ef
00 00 00 00 00 00 00 01  00 00 00 00 3b 9a ca 00
00 00 00 00 00 00 00 00  00 00 00 00 68 69
"""
DOC_ACK_HEX = """
41 43 01 02 00 00 00 00  01 23 45 67 89 ab cd ef
00 00 00 00 00 00 00 01  00 00 00 00 3b 9a ca 00
00 00 00 01 2a 05 f2 00  00 00 00 00
"""


def unspace(h):
    return bytes.fromhex("".join(h.split()))


def doc_examples_from_markdown():
    """The two hex blocks under '## Worked example' in PROTOCOL.md, if the file is present."""
    try:
        with open(PROTOCOL_MD, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    section = text.split("## Worked example", 1)[1]
    blocks = re.findall(r"```\n(.*?)```", section, re.S)
    return [unspace(b) for b in blocks[:2]]


SESSION = 0x0123456789ABCDEF

ex_update = valid_update(
    "worked_example_update", session=SESSION, seq=1, gen_ts=1 * SEC, acked_seq=0, hold_ns=0,
    payload=b"hi", note="PROTOCOL.md worked example: session 0x0123456789abcdef, seq 1, "
    "generated at 1 s, nothing acked, hold 0, payload 'hi'")
ex_ack = valid_ack(
    "worked_example_ack", session=SESSION, seq=1, gen_ts=1 * SEC, rx_ts=5 * SEC, hold_ns=0,
    feedback=[], note="PROTOCOL.md worked example: the ACK of worked_example_update, "
    "received at 5 s on the monitor's clock")

assert ex_update == unspace(DOC_UPDATE_HEX), "worked example UPDATE differs from PROTOCOL.md"
assert ex_ack == unspace(DOC_ACK_HEX), "worked example ACK differs from PROTOCOL.md"
_md = doc_examples_from_markdown()
if _md is not None:
    assert _md == [ex_update, ex_ack], "PROTOCOL.md worked examples changed; update this script"

# ---- More valid packets ----------------------------------------------------------------------
valid_update(
    "update_max_fields", flags=FLAG_PROBE, session=U64_MAX, seq=U64_MAX, gen_ts=U64_MAX,
    acked_seq=U64_MAX, hold_ns=U32_MAX, payload=b"\xff",
    note="every integer field at its maximum (u64::MAX, hold u32::MAX), PROBE set")
valid_update(
    "update_probe", flags=FLAG_PROBE, session=0xDEADBEEFCAFEF00D, seq=1, gen_ts=123_456_789,
    acked_seq=0, hold_ns=0, payload=b"probe-payload",
    note="initialisation probe: flags bit 0 (PROBE)")
valid_update(
    "update_multipath", flags=FLAG_MULTIPATH, session=0xDEADBEEFCAFEF00D, seq=9,
    gen_ts=2 * SEC + 7, acked_seq=8, hold_ns=0, payload=b"mp",
    note="multipath extension: flags bit 2 (MULTIPATH), one session over several paths")
valid_update(
    "update_empty_payload", session=0x8000000000000001, seq=7, gen_ts=10 * SEC + 1, acked_seq=5,
    hold_ns=250_000, payload=b"", note="length 0: a bare 44-byte UPDATE")
valid_update(
    "update_payload_300_bytes", session=0x00000000000000FF, seq=0x0102030405060708,
    gen_ts=0x1112131415161718, acked_seq=0x2122232425262728, hold_ns=0x31323334,
    payload=bytes(i % 256 for i in range(300)),
    note="length 0x012c exercises both bytes of the length field; distinct byte patterns in every "
    "integer field catch field-order and endianness mistakes")
valid_update(
    "update_payload_looks_like_bad_tlv", session=1, seq=2, gen_ts=3, acked_seq=1, hold_ns=4,
    payload=b"\x01\x05\x00",
    note="an UPDATE payload is opaque: bytes that would be a bad feedback TLV in an ACK are fine")
valid_ack(
    "ack_stale_two_feedback", flags=FLAG_STALE, session=SESSION, seq=41, gen_ts=2 * SEC,
    rx_ts=7 * SEC + 3, hold_ns=1_000, feedback=[(0x01, b"\x00\x0c"), (0x7F, b"")],
    note="STALE flag; feedback = aggregation TLV (kind 1, 2 bytes) then an unknown kind with an "
    "empty value")
valid_ack(
    "ack_max_fields", flags=FLAG_STALE, session=U64_MAX, seq=U64_MAX, gen_ts=U64_MAX,
    rx_ts=U64_MAX, hold_ns=U32_MAX, feedback=[(0xFF, b"\xff")],
    note="every integer field at its maximum, kind 0xff")
valid_ack(
    "ack_feedback_value_255_bytes", session=3, seq=4, gen_ts=5, rx_ts=6, hold_ns=7,
    feedback=[(0x80, bytes(range(255)))],
    note="TLV len byte 0xff must be read as 255 (unsigned); TLV ends exactly at the datagram end")
valid_ack(
    "ack_feedback_only_empty_tlvs", session=9, seq=10, gen_ts=11, rx_ts=12, hold_ns=13,
    feedback=[(0x00, b""), (0x00, b""), (0x02, b"")],
    note="three TLVs with empty values (kind 0 is not special)")

# ---- Address validation: COOKIE packets and updates that echo a cookie ------------------------
COOKIE = bytes.fromhex("c00c1e0123456789abcdef42")  # 12 bytes, distinct so misplacement shows
valid_cookie(
    "cookie_worked_example", session=SESSION, seq=1, gen_ts=1 * SEC, cookie=COOKIE,
    note="the COOKIE a monitor under pressure would send instead of worked_example_ack: session, "
    "sequence and generation timestamp echoed, the cookie in bytes 32..44, no body")
valid_cookie(
    "cookie_max_fields", session=U64_MAX, seq=U64_MAX, gen_ts=U64_MAX, cookie=b"\xff" * 12,
    note="every integer field at its maximum, cookie all 0xff")
valid_update(
    "update_cookie_with_payload", flags=FLAG_COOKIE, session=SESSION, seq=2, gen_ts=1 * SEC + 20,
    acked_seq=0, hold_ns=0, cookie=COOKIE, payload=b"hi",
    note="flag COOKIE (bit 1): the body is the 12-byte cookie of cookie_worked_example, then the "
    "payload 'hi'; length 14 counts both")
valid_update(
    "update_cookie_no_payload", flags=FLAG_COOKIE, session=SESSION, seq=3, gen_ts=2 * SEC,
    acked_seq=0, hold_ns=7, cookie=COOKIE, payload=b"",
    note="flag COOKIE with an empty payload: the body is exactly the 12-byte cookie")
valid_update(
    "update_cookie_probe", flags=FLAG_PROBE | FLAG_COOKIE, session=0xDEADBEEFCAFEF00D, seq=2,
    gen_ts=123_456_790, acked_seq=0, hold_ns=0, cookie=bytes(range(1, 13)),
    payload=b"probe-payload", note="an initialisation probe echoing a cookie: flags PROBE|COOKIE")

# ---- Sealed framing (flag AUTH): decode-only, the tag is a stand-in, not a valid seal ----------
valid_ack(
    "ack_auth_key_id_42", flags=FLAG_AUTH | FLAG_STALE, session=SESSION, seq=41, gen_ts=2 * SEC,
    rx_ts=7 * SEC + 3, hold_ns=1_000, feedback=[(0x01, b"\x00\x0c")], key_id=42,
    note="AUTH|STALE, key id 42 in byte 5, one feedback TLV, then a 16-byte tag that length does "
    "not count (framing only: the tag is not a valid seal; decode, do not re-encode)")
valid_update(
    "update_auth_cookie_key_id_0", flags=FLAG_AUTH | FLAG_COOKIE, session=SESSION, seq=2,
    gen_ts=1 * SEC + 20, acked_seq=0, hold_ns=0, cookie=COOKIE, payload=b"hi", key_id=0,
    note="AUTH|COOKIE with key id 0 (a zero byte 5 is a valid key id when AUTH is set); the body is "
    "cookie + payload, the 16-byte tag is neither (framing only: decode, do not re-encode)")
valid_cookie(
    "cookie_auth_key_id_255", flags=FLAG_AUTH, session=SESSION, seq=1, gen_ts=1 * SEC,
    cookie=COOKIE, key_id=255,
    note="a sealed COOKIE: 60 bytes, length 0, key id 255 (framing only: decode, do not re-encode)")

# ---- Malformed datagrams: expected error = first failing check of the decoding rules ----------
good_update = ex_update
good_ack = ex_ack


def patched(data, at, value):
    b = bytearray(data)
    b[at] = value
    return bytes(b)


malformed("empty_datagram", b"", "Truncated", "0 bytes")
malformed("truncated_43_bytes", good_ack[:43], "Truncated", "worked-example ACK minus its last byte")
malformed("truncated_header_of_update", good_update[:20], "Truncated",
          "first 20 bytes of the worked-example UPDATE")
malformed("truncated_before_magic_check", b"XX" + good_ack[2:43], "Truncated",
          "43 bytes with a bad magic: the size check comes first")
malformed("bad_magic", patched(good_update, 1, ord("D")), "BadMagic", "magic 'AD'")
malformed("bad_magic_swapped", b"CA" + good_update[2:], "BadMagic", "magic 'CA'")
malformed("all_zero_header", bytes(44), "BadMagic", "44 zero bytes")
malformed("version_2", patched(good_update, 2, 2), "UnsupportedVersion", "version byte 2")
malformed("version_0", patched(good_ack, 2, 0), "UnsupportedVersion", "version byte 0")
malformed("version_2_before_type", patched(patched(good_update, 2, 2), 3, 0x04),
          "UnsupportedVersion", "version 2 and type 0x04: the version check comes first")
malformed("type_0x04", patched(good_update, 3, 0x04), "UnknownType",
          "type byte 0x04 (0x03 is COOKIE)")
malformed("type_0x00", patched(good_ack, 3, 0x00), "UnknownType", "type byte 0x00")
malformed("type_0x83", patched(good_update, 3, 0x83), "UnknownType",
          "type byte 0x83: the AUTH bit belongs to the flags byte, not the type")
malformed("unknown_type_before_flags", raw(ptype=0xFF, flags=0xFF, reserved=0xFF, length=9),
          "UnknownType", "type 0xff with all flags, reserved set and a wrong length: type first")
malformed("update_flag_0x02", raw(ptype=TYPE_UPDATE, flags=0x02, session=1, seq=1, body=b"hi"),
          "BadCookie", "UPDATE with flag COOKIE (bit 1) but a 2-byte body: no room for the "
          "12-byte cookie")
malformed("update_flags_0x81", raw(ptype=TYPE_UPDATE, flags=0x81, session=1, seq=1, body=b"x"),
          "LengthMismatch", "UPDATE with PROBE|AUTH, length 1 and 1 byte after the header: with "
          "AUTH a 16-byte tag must follow the body, so length should be 1 - 16")
malformed("update_flag_0x08", raw(ptype=TYPE_UPDATE, flags=0x08, session=1, seq=1),
          "ReservedBits", "UPDATE with undefined flag bit 3")
malformed("ack_flag_0x04", raw(ptype=TYPE_ACK, flags=0x04, session=1, seq=1),
          "ReservedBits", "ACK with flag bit 2, which only UPDATE defines (MULTIPATH)")
malformed("update_flag_0x40_with_auth", raw(ptype=TYPE_UPDATE, flags=0xC0, reserved=1,
                                            session=1, seq=1, tag=FAKE_TAG),
          "ReservedBits", "UPDATE with AUTH and undefined bit 6, well framed otherwise")
malformed("ack_flag_0x02", raw(ptype=TYPE_ACK, flags=0x02, session=1, seq=1),
          "ReservedBits", "ACK with bit 1 (COOKIE is an UPDATE flag; undefined on an ACK)")
malformed("cookie_flag_0x01", raw(ptype=TYPE_COOKIE, flags=0x01, session=1, seq=1),
          "ReservedBits", "COOKIE with bit 0 (PROBE/STALE are undefined on a COOKIE)")
malformed("cookie_flag_0x02", raw(ptype=TYPE_COOKIE, flags=0x02, session=1, seq=1),
          "ReservedBits", "COOKIE with bit 1 (the COOKIE flag is an UPDATE flag)")
malformed("reserved_byte_nonzero", patched(good_update, 5, 0x01), "ReservedBits",
          "worked-example UPDATE with reserved byte 0x01")
malformed("reserved_byte_nonzero_ack", patched(good_ack, 5, 0x80), "ReservedBits",
          "worked-example ACK with reserved byte 0x80")
malformed("reserved_before_length", raw(ptype=TYPE_ACK, flags=FLAG_STALE, reserved=1, length=3),
          "ReservedBits", "reserved byte set and a wrong length: reserved check first")
malformed("key_id_without_auth", raw(ptype=TYPE_UPDATE, reserved=7, session=1, seq=1, body=b"hi",
                                     tag=FAKE_TAG),
          "ReservedBits", "byte 5 = 7 and 16 bytes after the body, but flag AUTH clear: byte 5 is "
          "then reserved (checked before the length)")
malformed("cookie_reserved_byte", raw(ptype=TYPE_COOKIE, reserved=1, session=1, seq=1),
          "ReservedBits", "unsealed COOKIE with reserved byte 0x01")
malformed("length_too_large", raw(ptype=TYPE_UPDATE, session=1, seq=1, length=3, body=b"hi"),
          "LengthMismatch", "length 3, 2 payload bytes follow")
malformed("length_too_small", raw(ptype=TYPE_UPDATE, session=1, seq=1, length=1, body=b"hi"),
          "LengthMismatch", "length 1, 2 payload bytes follow")
malformed("length_0xffff_header_only", raw(ptype=TYPE_ACK, length=0xFFFF), "LengthMismatch",
          "length 65535 on a bare 44-byte ACK")
malformed("length_nonzero_header_only", raw(ptype=TYPE_UPDATE, length=0x0100), "LengthMismatch",
          "length 256 (high byte) on a bare 44-byte UPDATE")
malformed("auth_tag_one_byte_short", raw(ptype=TYPE_UPDATE, flags=FLAG_AUTH, reserved=7, session=1,
                                         seq=1, body=b"hi", tag=FAKE_TAG[:15]),
          "LengthMismatch", "AUTH, key id 7, length 2: 44 + 2 + 15 bytes, one short of the tag")
malformed("auth_header_only", raw(ptype=TYPE_ACK, flags=FLAG_AUTH, reserved=9, session=1, seq=1),
          "LengthMismatch", "AUTH, key id 9, length 0 on a bare 44-byte ACK: no room for the tag")
malformed("auth_length_counts_tag", raw(ptype=TYPE_UPDATE, flags=FLAG_AUTH, reserved=1,
                                        length=2 + TAG_LEN, session=1, seq=1, body=b"hi",
                                        tag=FAKE_TAG),
          "LengthMismatch", "AUTH with length 18 = body + tag; length must not count the tag")
malformed("auth_tag_missing_on_update", raw(ptype=TYPE_UPDATE, flags=FLAG_AUTH, reserved=1,
                                            session=1, seq=1, body=bytes(TAG_LEN)),
          "LengthMismatch", "AUTH, length 16 and exactly 16 bytes after the header: the length "
          "counts them as body, so there is no tag")
malformed("cookie_length_before_body", raw(ptype=TYPE_COOKIE, length=5, session=1, seq=1,
                                           body=COOKIE),
          "LengthMismatch", "COOKIE with a body and a wrong length: length check first")
malformed("ack_length_mismatch_before_feedback",
          raw(ptype=TYPE_ACK, length=1, body=b"\x01\x09"), "LengthMismatch",
          "ACK whose length is wrong and whose feedback overruns: length check first")
malformed("cookie_with_body", raw(ptype=TYPE_COOKIE, session=1, seq=1, body=COOKIE),
          "BadCookie", "COOKIE with a 12-byte body (length 12): a COOKIE has no body")
malformed("cookie_auth_with_body", raw(ptype=TYPE_COOKIE, flags=FLAG_AUTH, reserved=3, session=1,
                                       seq=1, body=b"\x00", tag=FAKE_TAG),
          "BadCookie", "sealed COOKIE (key id 3) with a 1-byte body before its tag")
malformed("update_cookie_11_bytes", raw(ptype=TYPE_UPDATE, flags=FLAG_COOKIE, session=1, seq=2,
                                        body=COOKIE[:11]),
          "BadCookie", "UPDATE with flag COOKIE and an 11-byte body: one byte short of a cookie")
malformed("update_cookie_empty_body", raw(ptype=TYPE_UPDATE, flags=FLAG_PROBE | FLAG_COOKIE,
                                          session=1, seq=2),
          "BadCookie", "probe with flag COOKIE and no body at all")
malformed("update_auth_cookie_11_bytes", raw(ptype=TYPE_UPDATE, flags=FLAG_AUTH | FLAG_COOKIE,
                                             reserved=1, session=1, seq=2, body=COOKIE[:11],
                                             tag=FAKE_TAG),
          "BadCookie", "AUTH|COOKIE, length 11, then a 16-byte tag: the tag does not count "
          "towards the cookie")
malformed("feedback_tlv_overrun", raw(ptype=TYPE_ACK, session=1, seq=1,
                                      body=b"\x01\x05\x00\x0c"),
          "BadFeedback", "TLV kind 1 claims 5 value bytes, only 2 follow")
malformed("feedback_second_tlv_overrun", raw(ptype=TYPE_ACK, session=1, seq=1,
                                             body=tlvs([(1, b"\x07")]) + b"\x02\x02\x00"),
          "BadFeedback", "first TLV fine, second claims 2 value bytes, only 1 follows")
malformed("feedback_lone_kind_byte", raw(ptype=TYPE_ACK, session=1, seq=1, body=b"\x01"),
          "BadFeedback", "feedback area is a single kind byte with no len byte")
malformed("feedback_trailing_kind_byte", raw(ptype=TYPE_ACK, flags=FLAG_STALE, session=1, seq=1,
                                             body=tlvs([(1, b"\x00\x0c")]) + b"\x7f"),
          "BadFeedback", "a valid TLV followed by a lone kind byte")
malformed("feedback_overrun_into_tag", raw(ptype=TYPE_ACK, flags=FLAG_AUTH, reserved=4, session=1,
                                           seq=1, body=b"\x01\x05\x00\x0c", tag=FAKE_TAG),
          "BadFeedback", "sealed ACK (key id 4) whose TLV claims 5 value bytes, only 2 follow "
          "before the tag: the tag is not feedback")


# ---- Self-check: a minimal decoder written from the PROTOCOL.md decoding-rules table ----------
def py_decode(data):
    if len(data) < 44:
        return "Truncated"
    magic, version, ptype, flags, reserved, length, *_ = FIXED.unpack_from(data)
    if magic != MAGIC:
        return "BadMagic"
    if version != VERSION:
        return "UnsupportedVersion"
    if ptype not in DEFINED_FLAGS:
        return "UnknownType"
    if flags & ~DEFINED_FLAGS[ptype] or (reserved and not flags & FLAG_AUTH):
        return "ReservedBits"
    tag = TAG_LEN if flags & FLAG_AUTH else 0
    if length != len(data) - 44 - tag:
        return "LengthMismatch"
    body = data[44:44 + length]
    if ptype == TYPE_COOKIE and body:
        return "BadCookie"
    if ptype == TYPE_UPDATE and flags & FLAG_COOKIE and len(body) < COOKIE_LEN:
        return "BadCookie"
    if ptype == TYPE_ACK:
        fb, at = body, 0
        while at < len(fb):
            if at + 1 >= len(fb) or at + 2 + fb[at + 1] > len(fb):
                return "BadFeedback"
            at += 2 + fb[at + 1]
    return None


ERRORS = {"Truncated", "BadMagic", "UnsupportedVersion", "UnknownType", "ReservedBits",
          "LengthMismatch", "BadCookie", "BadFeedback"}
names = set()
for c in CASES:
    assert c["name"] not in names, "duplicate case name " + c["name"]
    names.add(c["name"])
    got = py_decode(bytes.fromhex(c["hex"]))
    want = c.get("error")
    assert got == want, (c["name"], got, want)
    assert want is None or want in ERRORS
assert {c["error"] for c in CASES if "error" in c} == ERRORS, "every error must be covered"

doc = {
    "format": (
        "ACP wire format v1 test vectors (docs/PROTOCOL.md), generated by "
        "testdata/gen_wire_vectors.py; do not edit by hand. 'cases' is a list; each case has "
        "'name', an optional human-readable 'note', 'hex' (the whole UDP datagram as lowercase "
        "hex) and exactly one of 'packet' (the decoded fields; the datagram must decode to them "
        "and re-encode to exactly 'hex') or 'error' (decoding must fail with this error from the "
        "PROTOCOL.md decoding-rules table: Truncated, BadMagic, UnsupportedVersion, UnknownType, "
        "ReservedBits, LengthMismatch, BadCookie, BadFeedback; the first failing check in table "
        "order wins). 'packet' fields: 'type' ('update', 'ack' or 'cookie'), 'flags' (number, "
        "the flags byte as on the wire), 'session', 'seq', 'gen_ts', and 'acked_seq' (update) or "
        "'rx_ts' (ack) -- all u64 values are JSON STRINGS of decimal digits, because JSON numbers "
        "lose precision above 2^53 -- 'hold_ns' (number, u32; update and ack), 'payload_hex' "
        "(update: the application payload, after any cookie) or 'feedback_hex' (ack, the raw "
        "feedback area), and for acks 'feedback': the TLVs in order as {'kind': number, "
        "'value_hex': string}. Address validation: a 'cookie' packet has 'cookie_hex' (the 12 "
        "bytes at 32..44) and no hold, body or other fields; an update whose flags include COOKIE "
        "(0x02) has 'cookie_hex' (the first 12 bytes of its body). Sealed framing: a packet whose "
        "flags include AUTH (0x80) has 'key_id' (byte 5), and its datagram ends with 16 bytes "
        "that 'length' does not count and that are NOT a valid seal (real seals are in "
        "auth_vectors.json): such a case checks framing only -- it must decode to the fields, "
        "which exclude those 16 bytes, but is not re-encoded (plain encoders do not seal)."
    ),
    "cases": CASES,
}

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

print(f"wrote {len(CASES)} cases to {os.path.relpath(OUT)}", file=sys.stderr)
