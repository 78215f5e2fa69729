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
#   0..2 magic "AC" | 2 version | 3 type | 4 flags | 5 reserved | 6..8 length (u16)
#   8..16 session | 16..24 sequence | 24..32 generation ts | 32..40 acked seq / rx ts
#   40..44 hold (u32) | 44.. payload / feedback TLVs.  All big-endian.
FIXED = struct.Struct(">2sBBBBHQQQQI")
assert FIXED.size == 44

MAGIC = b"AC"
VERSION = 1
TYPE_UPDATE = 0x01
TYPE_ACK = 0x02
FLAG_PROBE = 0x01  # UPDATE bit 0
FLAG_STALE = 0x01  # ACK bit 0

U64_MAX = 2**64 - 1
U32_MAX = 2**32 - 1
SEC = 1_000_000_000


def raw(*, magic=MAGIC, version=VERSION, ptype, flags=0, reserved=0, length=None, session=0,
        seq=0, gen_ts=0, word4=0, hold=0, body=b""):
    """Packs a datagram; every field can be overridden to build malformed cases."""
    if length is None:
        length = len(body)
    return FIXED.pack(magic, version, ptype, flags, reserved, length, session, seq, gen_ts, word4,
                      hold) + body


def tlvs(items):
    """Feedback area from [(kind, value_bytes)]: kind (1 byte) | len (1 byte) | value."""
    out = b""
    for kind, value in items:
        assert 0 <= kind <= 255 and len(value) <= 255
        out += struct.pack(">BB", kind, len(value)) + value
    return out


CASES = []


def valid_update(name, *, flags=0, session, seq, gen_ts, acked_seq, hold_ns, payload, note=None):
    data = raw(ptype=TYPE_UPDATE, flags=flags, session=session, seq=seq, gen_ts=gen_ts,
               word4=acked_seq, hold=hold_ns, body=payload)
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
    CASES.append(case)
    return data


def valid_ack(name, *, flags=0, session, seq, gen_ts, rx_ts, hold_ns, feedback, note=None):
    body = tlvs(feedback)
    data = raw(ptype=TYPE_ACK, flags=flags, session=session, seq=seq, gen_ts=gen_ts, word4=rx_ts,
               hold=hold_ns, body=body)
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
malformed("version_2_before_type", patched(patched(good_update, 2, 2), 3, 0x03),
          "UnsupportedVersion", "version 2 and type 0x03: the version check comes first")
malformed("type_0x03", patched(good_update, 3, 0x03), "UnknownType", "type byte 0x03")
malformed("type_0x00", patched(good_ack, 3, 0x00), "UnknownType", "type byte 0x00")
malformed("unknown_type_before_flags", raw(ptype=0xFF, flags=0xFF, reserved=0xFF, length=9),
          "UnknownType", "type 0xff with all flags, reserved set and a wrong length: type first")
malformed("update_flag_0x02", raw(ptype=TYPE_UPDATE, flags=0x02, session=1, seq=1),
          "ReservedBits", "UPDATE with undefined flag bit 1")
malformed("update_flags_0x81", raw(ptype=TYPE_UPDATE, flags=0x81, session=1, seq=1, body=b"x"),
          "ReservedBits", "UPDATE with PROBE and undefined bit 7")
malformed("ack_flag_0x02", raw(ptype=TYPE_ACK, flags=0x02, session=1, seq=1),
          "ReservedBits", "ACK with undefined flag bit 1")
malformed("reserved_byte_nonzero", patched(good_update, 5, 0x01), "ReservedBits",
          "worked-example UPDATE with reserved byte 0x01")
malformed("reserved_byte_nonzero_ack", patched(good_ack, 5, 0x80), "ReservedBits",
          "worked-example ACK with reserved byte 0x80")
malformed("reserved_before_length", raw(ptype=TYPE_ACK, flags=FLAG_STALE, reserved=1, length=3),
          "ReservedBits", "reserved byte set and a wrong length: reserved check first")
malformed("length_too_large", raw(ptype=TYPE_UPDATE, session=1, seq=1, length=3, body=b"hi"),
          "LengthMismatch", "length 3, 2 payload bytes follow")
malformed("length_too_small", raw(ptype=TYPE_UPDATE, session=1, seq=1, length=1, body=b"hi"),
          "LengthMismatch", "length 1, 2 payload bytes follow")
malformed("length_0xffff_header_only", raw(ptype=TYPE_ACK, length=0xFFFF), "LengthMismatch",
          "length 65535 on a bare 44-byte ACK")
malformed("length_nonzero_header_only", raw(ptype=TYPE_UPDATE, length=0x0100), "LengthMismatch",
          "length 256 (high byte) on a bare 44-byte UPDATE")
malformed("ack_length_mismatch_before_feedback",
          raw(ptype=TYPE_ACK, length=1, body=b"\x01\x09"), "LengthMismatch",
          "ACK whose length is wrong and whose feedback overruns: length check first")
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


# ---- Self-check: a minimal decoder written from the PROTOCOL.md decoding-rules table ----------
def py_decode(data):
    if len(data) < 44:
        return "Truncated"
    magic, version, ptype, flags, reserved, length, *_ = FIXED.unpack_from(data)
    if magic != MAGIC:
        return "BadMagic"
    if version != VERSION:
        return "UnsupportedVersion"
    if ptype not in (TYPE_UPDATE, TYPE_ACK):
        return "UnknownType"
    if flags & ~0x01 or reserved:
        return "ReservedBits"
    if length != len(data) - 44:
        return "LengthMismatch"
    if ptype == TYPE_ACK:
        fb, at = data[44:], 0
        while at < len(fb):
            if at + 1 >= len(fb) or at + 2 + fb[at + 1] > len(fb):
                return "BadFeedback"
            at += 2 + fb[at + 1]
    return None


ERRORS = {"Truncated", "BadMagic", "UnsupportedVersion", "UnknownType", "ReservedBits",
          "LengthMismatch", "BadFeedback"}
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
        "ReservedBits, LengthMismatch, BadFeedback; the first failing check in table order "
        "wins). 'packet' fields: 'type' ('update' or 'ack'), 'flags' (number), 'session', "
        "'seq', 'gen_ts', and 'acked_seq' (update) or 'rx_ts' (ack) -- all u64 values are JSON "
        "STRINGS of decimal digits, because JSON numbers lose precision above 2^53 -- 'hold_ns' "
        "(number, u32), 'payload_hex' (update) or 'feedback_hex' (ack, the raw feedback area), "
        "and for acks 'feedback': the TLVs in order as {'kind': number, 'value_hex': string}."
    ),
    "cases": CASES,
}

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

print(f"wrote {len(CASES)} cases to {os.path.relpath(OUT)}", file=sys.stderr)
