// A direct protobuf codec for the two messages a function server handles:
// it decodes a RunFunctionRequest and encodes a RunFunctionResponse in the
// shapes the SDK's generated types describe, but reads every
// google.protobuf.Struct straight into plain JSON (and writes plain JSON
// straight out), without the generated code's intermediate Value/Struct
// messages. Requests carry every observed and required resource as Structs,
// so at a thousand clusters this is where a server spends its time; the
// generated codec stays the reference the tests compare against. Servers
// decode on demand (decodeRequestOnDemand, below): the bigger parts of each
// Struct stay bytes until a function reads them.

import { keyedRecord } from '../json.js';
import type { RunFunctionRequest, RunFunctionResponse } from '../protocol.js';

/** Deeper than any Kubernetes object; bounds the recursion a hostile request can cause. */
export const MAX_STRUCT_DEPTH = 100;

export class DecodeError extends Error {
  override name = 'DecodeError';
}

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// --- Decoding -----------------------------------------------------------------

/**
 * One pass over the bytes with explicit bounds (no reader object per nested
 * message). Strings whose bytes are ASCII, as most Kubernetes strings are, are
 * cut from latin1 views of the buffer: a substring is far cheaper than a UTF-8
 * decode per string. The views are 512 KiB windows, made as needed: a view of
 * the whole buffer would be, past 1 MiB, an external string, which the garbage
 * collector does not weigh, so dozens of them could pile up between
 * collections.
 */
const WINDOW_BITS = 19;
const WINDOW = 1 << WINDOW_BITS;
const WINDOW_WORTH = WINDOW / 4;

/**
 * Short strings seen before, by a hash of their bytes: Kubernetes objects
 * repeat the same keys and many of the same values ("apiVersion", "True",
 * "Ready") thousands of times per request. Handing back the one already made
 * costs a comparison instead of an allocation each, which the young
 * generation would otherwise copy at every scavenge while the request lives.
 * A fixed table: a collision just replaces the entry. Pure: what a string
 * decodes to never depends on it.
 *
 * Only strings under 13 characters: V8 copies a substring that short, where a
 * longer one would be a slice that keeps its whole 512 KiB window alive for as
 * long as the table holds it.
 */
const SHORT_STRING = 12;
const SHORT_STRINGS = 1 << 14;
const shortStrings: (string | undefined)[] = new Array<string | undefined>(SHORT_STRINGS).fill(undefined);

function sameBytes(text: string, buf: Buffer, start: number): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

class Reader {
  pos = 0;
  /** Where readList gathers a list's items. */
  readonly items: Json[] = [];
  private readonly windows: (string | undefined)[] = [];
  /** Bytes cut so far from each window's part of the buffer, while it has no window. */
  private readonly used: number[] = [];
  constructor(readonly buf: Buffer) {}

  private window(index: number): string {
    let text = this.windows[index];
    if (text === undefined) {
      const start = index * WINDOW;
      text = this.buf.toString('latin1', start, Math.min(start + WINDOW, this.buf.length));
      this.windows[index] = text;
    }
    return text;
  }

  /** An unsigned varint (tags, lengths, bools, positive enums), exact up to 2^53. */
  varint(): number {
    const buf = this.buf;
    if (this.pos < buf.length) {
      const first = buf[this.pos]!;
      if (first < 0x80) {
        this.pos++;
        return first;
      }
    }
    let result = 0;
    let multiplier = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) throw new DecodeError('truncated varint');
      const byte = buf[this.pos++]!;
      result += (byte & 0x7f) * multiplier;
      if (byte < 0x80) return result;
      multiplier *= 0x80;
    }
    throw new DecodeError('varint longer than 10 bytes');
  }

  /** An int32 (enums): its low 32 bits, so a negative value's 10-byte form reads right. */
  int32(): number {
    let result = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new DecodeError('truncated varint');
      const byte = this.buf[this.pos++]!;
      if (i < 5) result |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) return result | 0;
    }
    throw new DecodeError('varint longer than 10 bytes');
  }

  /** A length prefix, checked against the end of the enclosing message. */
  length(end: number): number {
    const length = this.varint();
    if (this.pos + length > end) throw new DecodeError('length exceeds message');
    return length;
  }

  /** The end of a nested message that starts here. */
  sub(end: number): number {
    const length = this.length(end);
    return this.pos + length;
  }

  string(end: number): string {
    const length = this.length(end);
    const start = this.pos;
    const stop = start + length;
    this.pos = stop;
    const buf = this.buf;
    if (length > SHORT_STRING) {
      // Is it ASCII? (Four bytes at a time while they last: a long string has no use for a hash.)
      let i = start;
      for (; i + 4 <= stop; i += 4)
        if ((buf[i]! | buf[i + 1]! | buf[i + 2]! | buf[i + 3]!) > 0x7f) return buf.toString('utf8', start, stop);
      for (; i < stop; i++) if (buf[i]! > 0x7f) return buf.toString('utf8', start, stop);
      return this.cut(start, stop);
    }
    // One pass: is it ASCII, and its hash, to find it among the strings seen before.
    let hash = length;
    for (let i = start; i < stop; i++) {
      const byte = buf[i]!;
      if (byte > 0x7f) return buf.toString('utf8', start, stop);
      hash = Math.imul(hash ^ byte, 0x01000193);
    }
    {
      const slot = (hash >>> 0) & (SHORT_STRINGS - 1);
      const known = shortStrings[slot];
      if (known !== undefined && known.length === length && sameBytes(known, buf, start)) return known;
      const fresh = this.cut(start, stop);
      shortStrings[slot] = fresh;
      return fresh;
    }
  }

  /**
   * An ASCII run of the buffer as a string, from its latin1 window when it
   * lies in one. A window is made only once strings worth WINDOW_WORTH bytes
   * were cut from its part of the buffer: decoding on demand reads a few
   * strings from each resource, and copying the whole request into windows
   * for them would cost more than cutting each from the buffer.
   */
  private cut(start: number, stop: number): string {
    const index = start >>> WINDOW_BITS;
    if (index !== (stop - 1) >>> WINDOW_BITS || stop === start) return this.buf.toString('latin1', start, stop);
    if (this.windows[index] === undefined) {
      const used = (this.used[index] ?? 0) + (stop - start);
      this.used[index] = used;
      if (used < WINDOW_WORTH) return this.buf.toString('latin1', start, stop);
    }
    const offset = index * WINDOW;
    return this.window(index).substring(start - offset, stop - offset);
  }

  bytes(end: number): Buffer {
    const length = this.length(end);
    const value = Buffer.from(this.buf.subarray(this.pos, this.pos + length));
    this.pos += length;
    return value;
  }

  double(end: number): number {
    if (this.pos + 8 > end) throw new DecodeError('truncated double');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  skip(wireType: number, end: number): void {
    switch (wireType) {
      case VARINT:
        this.varint();
        break;
      case FIXED64:
        this.pos += 8;
        break;
      case LENGTH_DELIMITED: {
        // The length first: `this.pos += this.length(end)` would add it to the position before the length's own bytes.
        const length = this.length(end);
        this.pos += length;
        break;
      }
      case FIXED32:
        this.pos += 4;
        break;
      case START_GROUP:
        for (;;) {
          const tag = this.varint();
          if ((tag & 7) === END_GROUP) break;
          this.skip(tag & 7, end);
        }
        break;
      default:
        throw new DecodeError(`unknown wire type ${wireType}`);
    }
    if (this.pos > end) throw new DecodeError('truncated field');
  }
}

/** Set a key as an own property, even "__proto__", as JSON.parse would. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function readStruct(r: Reader, end: number, depth: number): Record<string, Json> {
  if (depth > MAX_STRUCT_DEPTH) throw new DecodeError(`struct nested deeper than ${MAX_STRUCT_DEPTH}`);
  const out: Record<string, Json> = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) {
      // fields: map<string, Value> entry
      const entryEnd = r.sub(end);
      let key = '';
      let value: Json | undefined;
      while (r.pos < entryEnd) {
        const t = r.varint();
        if (t === 10) key = r.string(entryEnd);
        else if (t === 18) value = readValue(r, r.sub(entryEnd), depth + 1);
        else r.skip(t & 7, entryEnd);
      }
      ended(r, entryEnd);
      if (value !== undefined) put(out, key, value);
    } else {
      r.skip(tag & 7, end);
    }
  }
  ended(r, end);
  return out;
}

/**
 * A varint may run on past the end of the message it starts in; the reader
 * would then go on from inside the next field. Inside a Struct that is
 * refused, so that where a Struct's parts lie is known from the lengths alone
 * (which decoding on demand relies on) and both decoders read the same.
 */
function ended(r: Reader, end: number): void {
  if (r.pos !== end) throw new DecodeError('field overruns its message');
}

function readList(r: Reader, end: number, depth: number): Json[] {
  if (depth > MAX_STRUCT_DEPTH) throw new DecodeError(`list nested deeper than ${MAX_STRUCT_DEPTH}`);
  // Items gather on the reader's stack (a nested list gathers above them and takes its own off
  // first) and leave as an array of exactly their number: an array grown by push keeps room for
  // seventeen, and most Kubernetes lists hold one or two.
  const items = r.items;
  const start = items.length;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) {
      const value = readValue(r, r.sub(end), depth + 1);
      // A Value with no kind set carries nothing; the generated codec reads it as undefined too.
      if (value !== undefined) items.push(value);
    } else {
      r.skip(tag & 7, end);
    }
  }
  ended(r, end);
  const out = items.slice(start);
  items.length = start;
  return out;
}

function readValue(r: Reader, end: number, depth: number): Json | undefined {
  let value: Json | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 8: // null_value
        r.varint();
        value = null;
        break;
      case 17: // number_value
        value = r.double(end);
        break;
      case 26: // string_value
        value = r.string(end);
        break;
      case 32: // bool_value
        value = r.varint() !== 0;
        break;
      case 42: // struct_value
        value = readStruct(r, r.sub(end), depth);
        break;
      case 50: // list_value
        value = readList(r, r.sub(end), depth);
        break;
      default:
        r.skip(tag & 7, end);
    }
  }
  ended(r, end);
  return value;
}

// --- Decoding on demand --------------------------------------------------------
//
// A function reads a small part of each resource it is sent (names, labels, a
// few status fields), and a request at a thousand clusters is megabytes of
// Structs. Decoded on demand, a Struct becomes an object whose scalar members
// are there at once and whose nested Structs and lists are not decoded until
// first read: such a member is an accessor (shared per key name, so objects
// built alike share V8's hidden classes) that decodes its bytes, replaces
// itself with the plain value and returns it. The objects are otherwise
// ordinary: keys in the same order as a full decode gives, visible to
// `for...in`, `Object.keys`, `Object.hasOwn`, spread, JSON and structuredClone,
// writable and deletable. A function cannot tell them from fully decoded
// ones, and what it gets from them is the same.
//
// Every Struct is still checked whole as it is reached (lengths, wire types,
// depth), in the same order as the full decoder reads it, so a request is
// refused exactly when the full decoder would refuse it, with the same
// message, whatever parts of it are later read.

const STRUCT = 1;
const LIST = 2;

/** A request being decoded on demand: its reader, and how many Struct bytes are still undecoded. */
interface Source {
  readonly r: Reader;
  /** Structs and lists up to this many bytes are decoded with what holds them. */
  readonly atOnce: number;
  pendingBytes: number;
}

/** The members of one object decoded on demand, five slots each: key, start, end, kind, and the value once read. */
interface Pending {
  readonly source: Source;
  readonly members: unknown[];
  /** Where each key's last member is, once there are too many members to search. */
  index: Map<string, number> | undefined;
}

const PENDING = Symbol('modelplane.pending');
type WithPending = Record<string, unknown> & { [PENDING]?: Pending };

/** Past this many undecoded members, an object gets a map from key to member rather than a search per read. */
const SEARCHED = 16;

function findMember(pending: Pending, key: string): number {
  const members = pending.members;
  if (members.length <= SEARCHED * 5) {
    // From the end: when a Struct repeats a key, its last value is the one that counts.
    for (let at = members.length - 5; at >= 0; at -= 5) if (members[at] === key) return at;
    return -1;
  }
  let index = pending.index;
  if (index === undefined) {
    index = new Map();
    for (let at = 0; at < members.length; at += 5) index.set(members[at] as string, at);
    pending.index = index;
  }
  return index.get(key) ?? -1;
}

function defineValue(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Not decoded yet (a member's value slot). */
const UNREAD = Symbol('unread');

/**
 * The member `key` of `target`: decoded on its first read and kept, so later
 * reads return the same value. (The accessor stays: redefining it as a plain
 * property would push V8 to make the object a slow dictionary.)
 */
function decodeMember(target: WithPending, key: string): unknown {
  const pending = target[PENDING];
  const at = pending === undefined ? -1 : findMember(pending, key);
  if (pending === undefined || at < 0) return undefined;
  const members = pending.members;
  const known = members[at + 4];
  if (known !== UNREAD) return known;
  const start = members[at + 1] as number;
  const end = members[at + 2] as number;
  const source = pending.source;
  source.pendingBytes -= end - start;
  const r = source.r;
  const resume = r.pos;
  r.pos = start;
  const value = members[at + 3] === STRUCT ? shallowStruct(source, end, 0, false) : shallowList(source, end);
  r.pos = resume;
  members[at + 4] = value;
  return value;
}

/** One accessor per key name (a bounded number kept), shared by every object that has that key undecoded. */
const accessors = new Map<string, PropertyDescriptor>();
const ACCESSORS_KEPT = 4096;

function accessorFor(key: string): PropertyDescriptor {
  let descriptor = accessors.get(key);
  if (descriptor === undefined) {
    descriptor = {
      get(this: WithPending): unknown {
        return decodeMember(this, key);
      },
      // Written before it was read: the written value simply replaces it.
      set(this: object, value: unknown): void {
        defineValue(this, key, value);
      },
      enumerable: true,
      configurable: true,
    };
    if (accessors.size < ACCESSORS_KEPT) accessors.set(key, descriptor);
  }
  return descriptor;
}

/**
 * Read a Value's fields at r.pos up to `end` (already checked): a scalar is
 * decoded; a Struct or list is only located, as [kind, start, end] in `at`.
 * Returns the scalar, or LOCATED, or undefined for a Value with no kind. As in
 * readValue, the last kind on the wire wins.
 */
const LOCATED = Symbol('located');
/**
 * A Struct or list this small is decoded at once: keeping its place and
 * decoding it later costs more than decoding it (labels, a condition, an
 * owner reference). What is left for later is what is big: managedFields,
 * specs, statuses, manifests.
 */
export const DECODED_AT_ONCE = 1024;
const located = [0, 0, 0];

function scanValue(source: Source, end: number, depth: number, check: boolean): Json | typeof LOCATED | undefined {
  const r = source.r;
  let value: Json | typeof LOCATED | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 8:
        r.varint();
        value = null;
        break;
      case 17:
        value = r.double(end);
        break;
      case 26:
        value = r.string(end);
        break;
      case 32:
        value = r.varint() !== 0;
        break;
      case 42:
      case 50: {
        const stop = r.sub(end);
        if (stop - r.pos <= source.atOnce) {
          value = tag === 42 ? readStruct(r, stop, depth) : readList(r, stop, depth);
          break;
        }
        const start = r.pos;
        if (check) {
          if (tag === 42) checkStruct(r.buf, start, stop, depth);
          else checkList(r.buf, start, stop, depth);
        }
        located[0] = tag === 42 ? STRUCT : LIST;
        located[1] = start;
        located[2] = stop;
        r.pos = stop;
        value = LOCATED;
        break;
      }
      default:
        r.skip(tag & 7, end);
    }
  }
  if (check) ended(r, end);
  return value;
}

/**
 * A Struct's top level (r.pos to `end`): scalars and small parts decoded,
 * bigger Structs and lists left for their first read. With `check`, it walks
 * and checks as readStruct does, the parts it leaves included (first reads
 * later need no checks); depth counts as in readStruct. Without, the bytes
 * were checked before, and depth starts again from 0, which can only be less
 * than the true depth, so no bound is crossed that was not crossed before.
 */
function shallowStruct(source: Source, end: number, depth: number, check: boolean): Record<string, Json> {
  if (check && depth > MAX_STRUCT_DEPTH) throw new DecodeError(`struct nested deeper than ${MAX_STRUCT_DEPTH}`);
  const r = source.r;
  const out: WithPending = {};
  let pending: Pending | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag !== 10) {
      r.skip(tag & 7, end);
      continue;
    }
    const entryEnd = r.sub(end);
    let key = '';
    let value: Json | typeof LOCATED | undefined;
    let kind = 0;
    let start = 0;
    let stop = 0;
    while (r.pos < entryEnd) {
      const t = r.varint();
      if (t === 10) key = r.string(entryEnd);
      else if (t === 18) {
        value = scanValue(source, r.sub(entryEnd), depth + 1, check);
        if (value === LOCATED) {
          kind = located[0]!;
          start = located[1]!;
          stop = located[2]!;
        }
      } else r.skip(t & 7, entryEnd);
    }
    if (check) ended(r, entryEnd);
    if (value === undefined) continue;
    if (value !== LOCATED) {
      put(out, key, value);
      continue;
    }
    if (pending === undefined) {
      pending = { source, members: [], index: undefined };
      Object.defineProperty(out, PENDING, { value: pending });
    }
    pending.members.push(key, start, stop, kind, UNREAD);
    pending.index?.set(key, pending.members.length - 5);
    source.pendingBytes += stop - start;
    Object.defineProperty(out, key, accessorFor(key));
  }
  if (check) ended(r, end);
  return out as Record<string, Json>;
}

/** A list, checked before (r.pos to `end`): its items, each Struct among them read by shallowStruct. */
function shallowList(source: Source, end: number): Json[] {
  const r = source.r;
  const items = r.items;
  const first = items.length;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag !== 10) {
      r.skip(tag & 7, end);
      continue;
    }
    const value = scanValue(source, r.sub(end), 0, false);
    if (value === undefined) continue;
    if (value !== LOCATED) {
      items.push(value);
      continue;
    }
    const kind = located[0];
    const start = located[1]!;
    const stop = located[2]!;
    const resume = r.pos;
    r.pos = start;
    items.push(kind === STRUCT ? shallowStruct(source, stop, 0, false) : shallowList(source, stop));
    r.pos = resume;
  }
  const out = items.slice(first);
  items.length = first;
  return out;
}

// Checking a Struct or list whole without decoding it (the parts left for
// later): readStruct, readList, readValue and the Reader's walk and checks,
// in their order and with their messages, building nothing. Written apart
// from the Reader, on a local position, because it runs over every byte of
// every part no function reads.

/** Where the last varint read by slowVarint ended. */
let varintEnd = 0;

/** Reader.varint, from `pos`: the value, and its end in varintEnd. */
function slowVarint(buf: Buffer, pos: number): number {
  let result = 0;
  let multiplier = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new DecodeError('truncated varint');
    const byte = buf[pos++]!;
    result += (byte & 0x7f) * multiplier;
    if (byte < 0x80) {
      varintEnd = pos;
      return result;
    }
    multiplier *= 0x80;
  }
  throw new DecodeError('varint longer than 10 bytes');
}

/** Reader.length: a length prefix at `pos`, checked against `end`; its end in varintEnd. */
function lengthAt(buf: Buffer, pos: number, end: number): number {
  let length: number;
  if (pos < buf.length && buf[pos]! < 0x80) {
    length = buf[pos]!;
    varintEnd = pos + 1;
  } else {
    length = slowVarint(buf, pos);
  }
  if (varintEnd + length > end) throw new DecodeError('length exceeds message');
  return length;
}

/** Reader.skip from `pos`; returns where the field ends. */
function skipAt(buf: Buffer, pos: number, wireType: number, end: number): number {
  switch (wireType) {
    case VARINT:
      slowVarint(buf, pos);
      pos = varintEnd;
      break;
    case FIXED64:
      pos += 8;
      break;
    case LENGTH_DELIMITED: {
      const length = lengthAt(buf, pos, end);
      pos = varintEnd + length;
      break;
    }
    case FIXED32:
      pos += 4;
      break;
    case START_GROUP:
      for (;;) {
        const tag = slowVarint(buf, pos);
        pos = varintEnd;
        if ((tag & 7) === END_GROUP) break;
        pos = skipAt(buf, pos, tag & 7, end);
      }
      break;
    default:
      throw new DecodeError(`unknown wire type ${wireType}`);
  }
  if (pos > end) throw new DecodeError('truncated field');
  return pos;
}

function overruns(pos: number, end: number): void {
  if (pos !== end) throw new DecodeError('field overruns its message');
}

/**
 * A length prefix of one or two bytes at `pos` (any length under 16 KiB),
 * packed with its own size: length * 4 + 1 or 2. -1 for a longer prefix or
 * none, left to lengthAt. (Packed, not in a shared variable: this runs for
 * every entry of every part no function reads, and locals are faster.)
 */
function shortLength(buf: Buffer, pos: number): number {
  const first = buf[pos]!;
  if (first < 0x80) return first * 4 + 1;
  const second = buf[pos + 1]!;
  return second < 0x80 ? ((first & 0x7f) | (second << 7)) * 4 + 2 : -1;
}

/**
 * Where a Value's content at `pos` ends if it is written the one way
 * encoders write it, one field filling the Value to `end` exactly: a string,
 * a Struct or a list (checked in full), a number, a bool or null. Otherwise
 * -1, and the caller checks it the long way, which says what is wrong.
 */
function plainValueEnd(buf: Buffer, pos: number, end: number, depth: number): number {
  const tag = buf[pos];
  if (tag === 17) return pos + 9 === end ? end : -1;
  if (tag === 8 || tag === 32) return buf[pos + 1]! < 0x80 && pos + 2 === end ? end : -1;
  if (tag !== 26 && tag !== 42 && tag !== 50) return -1;
  const packed = shortLength(buf, pos + 1);
  const start = pos + 1 + (packed & 3);
  if (packed < 0 || start + (packed >>> 2) !== end) return -1;
  if (tag === 42) checkStruct(buf, start, end, depth);
  else if (tag === 50) checkList(buf, start, end, depth);
  return end;
}

/**
 * Where a Struct entry at `pos` ends if it is a plain one (its key and then a
 * plain Value, nothing else, lengths within bounds), else -1. A plain entry
 * has passed every check readStruct makes when this returns.
 */
function plainEntryEnd(buf: Buffer, pos: number, end: number, depth: number): number {
  if (buf[pos] !== 10) return -1;
  const entry = shortLength(buf, pos + 1);
  const key = pos + 1 + (entry & 3);
  const entryEnd = key + (entry >>> 2);
  if (entry < 0 || entryEnd > end || buf[key] !== 10) return -1;
  const keyLength = shortLength(buf, key + 1);
  const value = key + 1 + (keyLength & 3) + (keyLength >>> 2);
  if (keyLength < 0 || buf[value] !== 18) return -1;
  const valueLength = shortLength(buf, value + 1);
  const content = value + 1 + (valueLength & 3);
  if (valueLength < 0 || content + (valueLength >>> 2) !== entryEnd) return -1;
  return plainValueEnd(buf, content, entryEnd, depth + 1);
}

/** readStruct's checks over `pos` to `end`; returns the end. */
function checkStruct(buf: Buffer, pos: number, end: number, depth: number): number {
  if (depth > MAX_STRUCT_DEPTH) throw new DecodeError(`struct nested deeper than ${MAX_STRUCT_DEPTH}`);
  while (pos < end) {
    const plain = plainEntryEnd(buf, pos, end, depth);
    if (plain >= 0) {
      pos = plain;
      continue;
    }
    let tag = buf[pos]!;
    if (tag < 0x80) pos++;
    else {
      tag = slowVarint(buf, pos);
      pos = varintEnd;
    }
    if (tag !== 10) {
      pos = skipAt(buf, pos, tag & 7, end);
      continue;
    }
    const entryLength = lengthAt(buf, pos, end);
    pos = varintEnd;
    const entryEnd = pos + entryLength;
    while (pos < entryEnd) {
      let t = buf[pos]!;
      if (t < 0x80) pos++;
      else {
        t = slowVarint(buf, pos);
        pos = varintEnd;
      }
      if (t === 10) {
        const length = lengthAt(buf, pos, entryEnd);
        pos = varintEnd + length;
      } else if (t === 18) {
        const length = lengthAt(buf, pos, entryEnd);
        pos = varintEnd;
        pos = checkValue(buf, pos, pos + length, depth + 1);
      } else {
        pos = skipAt(buf, pos, t & 7, entryEnd);
      }
    }
    overruns(pos, entryEnd);
  }
  overruns(pos, end);
  return pos;
}

/** readList's checks over `pos` to `end`; returns the end. */
function checkList(buf: Buffer, pos: number, end: number, depth: number): number {
  if (depth > MAX_STRUCT_DEPTH) throw new DecodeError(`list nested deeper than ${MAX_STRUCT_DEPTH}`);
  while (pos < end) {
    if (buf[pos] === 10) {
      const packed = shortLength(buf, pos + 1);
      const item = pos + 1 + (packed & 3);
      const itemEnd = item + (packed >>> 2);
      if (packed >= 0 && itemEnd <= end && plainValueEnd(buf, item, itemEnd, depth + 1) >= 0) {
        pos = itemEnd;
        continue;
      }
    }
    let tag = buf[pos]!;
    if (tag < 0x80) pos++;
    else {
      tag = slowVarint(buf, pos);
      pos = varintEnd;
    }
    if (tag === 10) {
      const length = lengthAt(buf, pos, end);
      pos = varintEnd;
      pos = checkValue(buf, pos, pos + length, depth + 1);
    } else {
      pos = skipAt(buf, pos, tag & 7, end);
    }
  }
  overruns(pos, end);
  return pos;
}

/** readValue's checks over `pos` to `end`; returns the end. */
function checkValue(buf: Buffer, pos: number, end: number, depth: number): number {
  while (pos < end) {
    let tag = buf[pos]!;
    if (tag < 0x80) pos++;
    else {
      tag = slowVarint(buf, pos);
      pos = varintEnd;
    }
    switch (tag) {
      case 8:
      case 32:
        slowVarint(buf, pos);
        pos = varintEnd;
        break;
      case 17:
        if (pos + 8 > end) throw new DecodeError('truncated double');
        pos += 8;
        break;
      case 26: {
        const length = lengthAt(buf, pos, end);
        pos = varintEnd + length;
        break;
      }
      case 42: {
        const length = lengthAt(buf, pos, end);
        pos = varintEnd;
        pos = checkStruct(buf, pos, pos + length, depth);
        break;
      }
      case 50: {
        const length = lengthAt(buf, pos, end);
        pos = varintEnd;
        pos = checkList(buf, pos, pos + length, depth);
        break;
      }
      default:
        pos = skipAt(buf, pos, tag & 7, end);
    }
  }
  overruns(pos, end);
  return pos;
}

const sources = new WeakMap<object, { source: Source; structBytes: number; requestBytes: number }>();

/**
 * Decode a RunFunctionRequest, each Struct's bigger nested parts only when
 * first read. `decodedAtOnce` (tests) sets how big a part may be and still be
 * decoded with what holds it; 0 leaves every nested Struct and list for later.
 */
export function decodeRequestOnDemand(bytes: Uint8Array, options: { decodedAtOnce?: number } = {}): RunFunctionRequest {
  const buf = asBuffer(bytes);
  const r = new Reader(buf);
  const source: Source = { r, atOnce: options.decodedAtOnce ?? DECODED_AT_ONCE, pendingBytes: 0 };
  let structBytes = 0;
  const struct: StructReader = (_reader, end, depth) => {
    structBytes += end - r.pos;
    return shallowStruct(source, end, depth, true);
  };
  const req = readRequest(r, buf.length, struct);
  sources.set(req, { source, structBytes, requestBytes: buf.length });
  return req;
}

export interface DecodeStats {
  /** The request's size on the wire. */
  requestBytes: number;
  /** The bytes of all its Structs (resources, input, context, schemas). */
  structBytes: number;
  /** The bytes decoded so far: the request less the parts of its Structs no one has read. */
  decodedBytes: number;
}

/** How much of a request decoded on demand has been decoded so far (undefined for one decoded in full). */
export function decodeStats(req: RunFunctionRequest): DecodeStats | undefined {
  const found = sources.get(req);
  if (found === undefined) return undefined;
  return { requestBytes: found.requestBytes, structBytes: found.structBytes, decodedBytes: found.requestBytes - found.source.pendingBytes };
}

interface DecodedResource {
  resource: Record<string, Json> | undefined;
  connectionDetails: Record<string, Buffer>;
  ready: number;
}

/** How a message reader reads a Struct: all of it (readStruct), or its top level only (readStructOnDemand). */
type StructReader = (r: Reader, end: number, depth: number) => Record<string, Json>;

function readResource(r: Reader, end: number, struct: StructReader): DecodedResource {
  const out: DecodedResource = { resource: undefined, connectionDetails: {}, ready: 0 };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) out.resource = struct(r, r.sub(end), 0);
    else if (tag === 18) readMap(r, r.sub(end), out.connectionDetails, (e) => r.bytes(e));
    else if (tag === 24) out.ready = r.int32();
    else r.skip(tag & 7, end);
  }
  return out;
}

function readResources(r: Reader, end: number, struct: StructReader): { items: DecodedResource[] } {
  const items: DecodedResource[] = [];
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) items.push(readResource(r, r.sub(end), struct));
    else r.skip(tag & 7, end);
  }
  return { items };
}

function readState(
  r: Reader,
  end: number,
  struct: StructReader,
): { composite: DecodedResource | undefined; resources: Record<string, DecodedResource> } {
  const out: { composite: DecodedResource | undefined; resources: Record<string, DecodedResource> } = {
    composite: undefined,
    // A thousand clusters are a thousand keys here.
    resources: keyedRecord(),
  };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) out.composite = readResource(r, r.sub(end), struct);
    else if (tag === 18) readMap(r, r.sub(end), out.resources, (e) => readResource(r, r.sub(e), struct));
    else r.skip(tag & 7, end);
  }
  return out;
}

/** A map entry ending at `end`: key (field 1, string) and value (field 2, read by `value`, given the entry's end). */
function readMap<T>(r: Reader, end: number, target: Record<string, T>, value: (end: number) => T): void {
  let key = '';
  let found: T | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) key = r.string(end);
    else if (tag === 18) found = value(end);
    else r.skip(tag & 7, end);
  }
  if (found !== undefined) put(target, key, found);
}

function readCredentials(r: Reader, end: number): { credentialData?: { data: Record<string, Buffer> } } {
  const credentials: { credentialData?: { data: Record<string, Buffer> } } = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) {
      const dataEnd = r.sub(end);
      const data: Record<string, Buffer> = {};
      while (r.pos < dataEnd) {
        const t = r.varint();
        if (t === 10) readMap(r, r.sub(dataEnd), data, (e) => r.bytes(e));
        else r.skip(t & 7, dataEnd);
      }
      credentials.credentialData = { data };
    } else r.skip(tag & 7, end);
  }
  return credentials;
}

function readSchema(r: Reader, end: number, struct: StructReader): { openapiV3?: Record<string, Json> } {
  const schema: { openapiV3?: Record<string, Json> } = {};
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) schema.openapiV3 = struct(r, r.sub(end), 0);
    else r.skip(tag & 7, end);
  }
  return schema;
}

function readMeta(r: Reader, end: number): { tag: string; capabilities: number[] } {
  const meta = { tag: '', capabilities: [] as number[] };
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === 10) meta.tag = r.string(end);
    else if (tag === 16) meta.capabilities.push(r.int32());
    else if (tag === 18) {
      const packedEnd = r.sub(end);
      while (r.pos < packedEnd) meta.capabilities.push(r.int32());
    } else r.skip(tag & 7, end);
  }
  return meta;
}

/** Decode a RunFunctionRequest into the shape of the SDK's generated type, every Struct in full. */
export function decodeRequest(bytes: Uint8Array): RunFunctionRequest {
  const buf = asBuffer(bytes);
  return readRequest(new Reader(buf), buf.length, readStruct);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function readRequest(r: Reader, end: number, struct: StructReader): RunFunctionRequest {
  const extraResources: Record<string, { items: DecodedResource[] }> = {};
  const credentials: Record<string, { credentialData?: { data: Record<string, Buffer> } }> = {};
  const requiredResources: Record<string, { items: DecodedResource[] }> = {};
  const requiredSchemas: Record<string, { openapiV3?: Record<string, Json> }> = {};
  const req: Record<string, unknown> = {
    meta: undefined,
    observed: undefined,
    desired: undefined,
    input: undefined,
    context: undefined,
    extraResources,
    credentials,
    requiredResources,
    requiredSchemas,
  };
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case 10:
        req['meta'] = readMeta(r, r.sub(end));
        break;
      case 18:
        req['observed'] = readState(r, r.sub(end), struct);
        break;
      case 26:
        req['desired'] = readState(r, r.sub(end), struct);
        break;
      case 34:
        req['input'] = struct(r, r.sub(end), 0);
        break;
      case 42:
        req['context'] = struct(r, r.sub(end), 0);
        break;
      case 50:
        readMap(r, r.sub(end), extraResources, (e) => readResources(r, r.sub(e), struct));
        break;
      case 58:
        readMap(r, r.sub(end), credentials, (e) => readCredentials(r, r.sub(e)));
        break;
      case 66:
        readMap(r, r.sub(end), requiredResources, (e) => readResources(r, r.sub(e), struct));
        break;
      case 74:
        readMap(r, r.sub(end), requiredSchemas, (e) => readSchema(r, r.sub(e), struct));
        break;
      default:
        r.skip(tag & 7, end);
    }
  }
  return req as unknown as RunFunctionRequest;
}

// --- Encoding -----------------------------------------------------------------

/**
 * The buffer responses are written into, kept from call to call: a fresh
 * 64 KiB buffer per call cost more than encoding a small response. Safe to
 * share because encoding is synchronous and `finish` copies the bytes out.
 * A buffer grown for a big response is kept up to SCRATCH_KEEP, so a fleet's
 * steady state does not regrow it on every call, and no bigger, so one huge
 * response does not pin its memory.
 */
const SCRATCH_KEEP = 4 * 1024 * 1024;
let scratch: Buffer = Buffer.allocUnsafe(64 * 1024);

class Writer {
  buf: Buffer = scratch;
  pos = 0;

  reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(value: number): void {
    this.reserve(10);
    if (value < 0) {
      // A negative int32 (an enum) goes out as its 64-bit two's complement, 10 bytes.
      let big = BigInt.asUintN(64, BigInt(value));
      while (big > 0x7fn) {
        this.buf[this.pos++] = Number(big & 0x7fn) | 0x80;
        big >>= 7n;
      }
      this.buf[this.pos++] = Number(big);
      return;
    }
    let v = value;
    while (v > 0x7f) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    // Worst case three bytes per UTF-16 unit, plus the length prefix.
    this.reserve(value.length * 3 + 5);
    const n = value.length;
    if (n < 128) {
      // Short ASCII strings, most of a Kubernetes object, are copied in JS: cheaper than a native call each.
      const buf = this.buf;
      const start = this.pos;
      buf[start] = n;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c > 0x7f) break;
        buf[start + 1 + i] = c;
      }
      if (i === n) {
        this.pos = start + 1 + n;
        return;
      }
    }
    const length = Buffer.byteLength(value, 'utf8');
    this.varint(length);
    this.pos += this.buf.write(value, this.pos, 'utf8');
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(value.length);
    this.reserve(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.reserve(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * Start a length-delimited field; `end(mark)` closes it once its body is
   * written. One byte is kept for the length; a longer length moves the body
   * up (a native memmove, rare relative to the small fields).
   */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.reserve(1);
    return this.pos++;
  }

  end(lengthAt: number): void {
    const bodyAt = lengthAt + 1;
    const length = this.pos - bodyAt;
    if (length < 0x80) {
      this.buf[lengthAt] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.reserve(extra);
    this.buf.copyWithin(bodyAt + extra, bodyAt, this.pos);
    this.pos += extra;
    let v = length;
    let at = lengthAt;
    while (v > 0x7f) {
      this.buf[at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[at] = v;
  }

  /** The bytes written, in a buffer of their own (small ones from Node's shared pool). */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    if (this.buf.length <= SCRATCH_KEEP) scratch = this.buf;
    return out;
  }
}

function varintSize(value: number): number {
  let size = 1;
  while (value > 0x7f) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** Up to this many keys, an object out of order is written by selection rather than by sorting its keys. */
const SMALL_STRUCT = 12;

/**
 * Struct fields go out in byte order of their keys, not in the order the
 * object was built or the request listed them: Crossplane (Go) sends map
 * entries in random order, and anything a function copies from a request
 * would otherwise carry that order into the response. Sorted, the same
 * request always gets the same bytes, whatever order its maps arrived in.
 * (A Struct is a map: the order means nothing to a reader.)
 */
function writeStruct(w: Writer, object: Record<string, unknown>): void {
  let count = 0;
  let ordered = true;
  let previous: string | undefined;
  // (JSON objects have no inherited keys for for...in to find.)
  for (const key in object) {
    if (previous !== undefined && previous > key) ordered = false;
    previous = key;
    count++;
  }
  if (ordered) {
    for (const key in object) writeField(w, key, object[key]);
    return;
  }
  if (count > SMALL_STRUCT) {
    for (const key of Object.keys(object).sort()) writeField(w, key, object[key]);
    return;
  }
  // A small object out of order (most of a Kubernetes object's maps): pick each next key in turn.
  // Quadratic, but over a handful of keys, and it allocates nothing; sorting a copy of the keys
  // of every object was most of what encoding a thousand-cluster response allocated.
  let last: string | undefined;
  for (let n = 0; n < count; n++) {
    let next: string | undefined;
    for (const key in object) {
      if ((last === undefined || key > last) && (next === undefined || key < next)) next = key;
    }
    writeField(w, next!, object[next!]);
    last = next;
  }
}

function writeField(w: Writer, key: string, value: unknown): void {
  if (!isEncodable(value)) return;
  const entry = w.begin(1);
  // proto3 leaves default values off the wire; so does the generated codec.
  if (key !== '') w.string(1, key);
  const body = w.begin(2);
  writeValue(w, value);
  w.end(body);
  w.end(entry);
}

/** Undefined and non-finite numbers are left out: Crossplane could not read them, and null means "delete". */
function isEncodable(value: unknown): boolean {
  return value !== undefined && !(typeof value === 'number' && !Number.isFinite(value));
}

function writeValue(w: Writer, value: unknown): void {
  if (value === null) {
    w.tag(1, VARINT);
    w.varint(0);
  } else if (typeof value === 'number') {
    w.double(2, value);
  } else if (typeof value === 'string') {
    w.string(3, value);
  } else if (typeof value === 'boolean') {
    w.tag(4, VARINT);
    w.varint(value ? 1 : 0);
  } else if (Array.isArray(value)) {
    const list = w.begin(6);
    for (const item of value as unknown[]) {
      if (!isEncodable(item)) continue;
      const element = w.begin(1);
      writeValue(w, item);
      w.end(element);
    }
    w.end(list);
  } else if (typeof value === 'object') {
    const struct = w.begin(5);
    writeStruct(w, value as Record<string, unknown>);
    w.end(struct);
  } else {
    throw new Error(`cannot encode a ${typeof value} in a protobuf Struct`);
  }
}

interface EncodableResource {
  resource?: Record<string, unknown> | undefined;
  connectionDetails?: Record<string, Uint8Array>;
  ready?: number;
}

function writeResource(w: Writer, resource: EncodableResource): void {
  if (resource.resource !== undefined) {
    const body = w.begin(1);
    writeStruct(w, resource.resource);
    w.end(body);
  }
  const details = resource.connectionDetails ?? {};
  for (const key of Object.keys(details)) {
    const value = details[key]!;
    const entry = w.begin(2);
    if (key !== '') w.string(1, key);
    if (value.length > 0) w.bytes(2, value);
    w.end(entry);
  }
  if (resource.ready) {
    w.tag(3, VARINT);
    w.varint(resource.ready);
  }
}

/** A map<string, message> field: one entry per key, its value written by `value`. */
function writeMap<T>(w: Writer, field: number, map: Record<string, T> | undefined, value: (v: T) => void): void {
  if (!map) return;
  for (const key of Object.keys(map)) {
    const entry = w.begin(field);
    if (key !== '') w.string(1, key);
    const body = w.begin(2);
    value(map[key] as T);
    w.end(body);
    w.end(entry);
  }
}

type Selector = NonNullable<RunFunctionResponse['requirements']>['resources'][string];

function writeSelector(w: Writer, selector: Selector): void {
  if (selector.apiVersion) w.string(1, selector.apiVersion);
  if (selector.kind) w.string(2, selector.kind);
  if (selector.matchName !== undefined) w.string(3, selector.matchName);
  if (selector.matchLabels !== undefined) {
    const labels = selector.matchLabels.labels;
    const body = w.begin(4);
    for (const key of Object.keys(labels)) {
      const label = labels[key] ?? '';
      const entry = w.begin(1);
      if (key !== '') w.string(1, key);
      if (label !== '') w.string(2, label);
      w.end(entry);
    }
    w.end(body);
  }
  if (selector.namespace !== undefined) w.string(5, selector.namespace);
}

/** A varint field (an enum, or a small integer such as a Duration's seconds), left out when unset. */
function writeVarint(w: Writer, field: number, value: number | undefined): void {
  if (value === undefined) return;
  w.tag(field, VARINT);
  w.varint(value);
}

/** Encode a RunFunctionResponse (the SDK's generated type) to bytes. */
export function encodeResponse(rsp: RunFunctionResponse): Buffer {
  const w = new Writer();
  if (rsp.meta) {
    const meta = w.begin(1);
    if (rsp.meta.tag) w.string(1, rsp.meta.tag);
    if (rsp.meta.ttl) {
      const ttl = w.begin(2);
      if (rsp.meta.ttl.seconds) writeVarint(w, 1, rsp.meta.ttl.seconds);
      if (rsp.meta.ttl.nanos) writeVarint(w, 2, rsp.meta.ttl.nanos);
      w.end(ttl);
    }
    w.end(meta);
  }
  if (rsp.desired) {
    const desired = w.begin(2);
    if (rsp.desired.composite) {
      const composite = w.begin(1);
      writeResource(w, rsp.desired.composite);
      w.end(composite);
    }
    writeMap(w, 2, rsp.desired.resources, (resource) => {
      writeResource(w, resource);
    });
    w.end(desired);
  }
  for (const result of rsp.results) {
    const body = w.begin(3);
    if (result.severity) writeVarint(w, 1, result.severity);
    if (result.message) w.string(2, result.message);
    if (result.reason !== undefined) w.string(3, result.reason);
    writeVarint(w, 4, result.target);
    w.end(body);
  }
  if (rsp.context !== undefined) {
    const context = w.begin(4);
    writeStruct(w, rsp.context);
    w.end(context);
  }
  if (rsp.requirements) {
    const requirements = w.begin(5);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- encoded for Crossplane releases that still read it
    writeMap(w, 1, rsp.requirements.extraResources, (selector) => {
      writeSelector(w, selector);
    });
    writeMap(w, 2, rsp.requirements.resources, (selector) => {
      writeSelector(w, selector);
    });
    writeMap(w, 3, rsp.requirements.schemas, (selector) => {
      if (selector.apiVersion) w.string(1, selector.apiVersion);
      if (selector.kind) w.string(2, selector.kind);
    });
    w.end(requirements);
  }
  for (const condition of rsp.conditions) {
    const body = w.begin(6);
    if (condition.type) w.string(1, condition.type);
    if (condition.status) writeVarint(w, 2, condition.status);
    if (condition.reason) w.string(3, condition.reason);
    if (condition.message !== undefined) w.string(4, condition.message);
    writeVarint(w, 5, condition.target);
    w.end(body);
  }
  if (rsp.output !== undefined) {
    const output = w.begin(7);
    writeStruct(w, rsp.output);
    w.end(output);
  }
  return w.finish();
}
