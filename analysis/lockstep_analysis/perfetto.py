"""Perfetto's trace format, written and read by hand (no protobuf library needed).

A Perfetto trace is a protobuf `Trace`: a run of `TracePacket`s, each a track descriptor (a named
timeline, optionally nested under another) or a timestamped `TrackEvent` on a track (the begin or
end of a slice, an instant, a counter value). The field numbers below are those of Perfetto's
protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto, track_descriptor.proto,
counter_descriptor.proto and debug_annotation.proto; a wrong number makes the file unreadable, so
they are written out once, here, and the decoder at the end of this file reads them back.

Writing is columnar: a run has millions of ops, and encoding them one Python object at a time is
what would make an export slow. `encode(fields)` takes one numpy column per field and writes every
row's packet at once; a field may be absent on some rows (`present`). On top of it, `Slices` and
`counter_packets` turn slices, instants and counter values on tracks into events in the order
Perfetto pairs them as meant. Descriptors are few, so `track_descriptor` builds one packet from
plain values. `read_packets` and `timeline` read a trace back, for tests and for looking inside.
"""

import numpy as np

# TracePacket, framed as `repeated TracePacket packet = 1` of Trace.
PACKET = 1
TIMESTAMP = 8                    # uint64, nanoseconds
TRUSTED_PACKET_SEQUENCE_ID = 10  # uint32
TRACK_EVENT = 11
TRACK_DESCRIPTOR = 60

# TrackDescriptor.
UUID = 1
NAME = 2
PARENT_UUID = 5
COUNTER = 8
CHILD_ORDERING = 11
SIBLING_ORDER_RANK = 12
CHILD_ORDERING_EXPLICIT = 3      # children sorted by their sibling_order_rank
# CounterDescriptor.
COUNTER_UNIT = 3
COUNTER_UNIT_NAME = 6
UNIT_SIZE_BYTES = 3

# TrackEvent.
EVENT_TYPE = 9
TRACK_UUID = 11
EVENT_NAME = 23
CATEGORIES = 22
DEBUG_ANNOTATIONS = 4
DOUBLE_COUNTER_VALUE = 44        # double: wire type fixed64
FLOW_IDS = 47                    # fixed64
TERMINATING_FLOW_IDS = 48        # fixed64
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER_VALUE = 1, 2, 3, 4
# DebugAnnotation.
ANNOTATION_NAME = 10
ANNOTATION_INT = 4
ANNOTATION_DOUBLE = 5
ANNOTATION_STRING = 6

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def varint(value):
    """`value` as a protobuf varint; a negative int64 as its 64-bit two's complement, as in
    protobuf."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number, wire):
    return varint(number << 3 | wire)


def varint_field(number, value):
    return _key(number, _VARINT) + varint(value)


def bytes_field(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _key(number, _LENGTH) + varint(len(payload)) + payload


def track_descriptor(uuid, name, parent=None, order_children=False, order_rank=None,
                     counter_unit=None, counter_unit_name=None):
    """One framed TracePacket describing a track.

    `order_children` asks the UI to sort this track's children by their `order_rank` (else it picks
    an order of its own); `counter_unit` (UNIT_SIZE_BYTES) or `counter_unit_name` make it a counter
    track, which holds COUNTER_VALUE events only.
    """
    body = varint_field(UUID, uuid) + bytes_field(NAME, name)
    if parent is not None:
        body += varint_field(PARENT_UUID, parent)
    if order_children:
        body += varint_field(CHILD_ORDERING, CHILD_ORDERING_EXPLICIT)
    if order_rank is not None:
        body += varint_field(SIBLING_ORDER_RANK, order_rank)
    if counter_unit is not None or counter_unit_name is not None:
        counter = b""
        if counter_unit is not None:
            counter += varint_field(COUNTER_UNIT, counter_unit)
        if counter_unit_name is not None:
            counter += bytes_field(COUNTER_UNIT_NAME, counter_unit_name)
        body += bytes_field(COUNTER, counter)
    return bytes_field(PACKET, bytes_field(TRACK_DESCRIPTOR, body))


# ---- Columnar encoding: one numpy column per field, every row's bytes at once.

_SHIFTS = np.arange(0, 64, 7, dtype=np.uint64)  # ten groups of 7 bits cover 64


def _varints(values):
    """The varint bytes of each uint64 value, as the rows of a matrix as wide as the longest, and
    how many of each row count."""
    width = max(1, (int(values.max(initial=0)).bit_length() + 6) // 7)
    groups = values[:, None] >> _SHIFTS[:width]
    sizes = 1 + np.count_nonzero(groups[:, 1:], axis=1)
    octets = (groups & np.uint64(0x7F)).astype(np.uint8)
    octets[np.arange(width) < (sizes - 1)[:, None]] |= 0x80
    return octets, sizes


def _scatter(buf, at, octets, sizes=None):
    """Write row i of `octets` (its first sizes[i] bytes; all of it without `sizes`) at at[i]."""
    columns = np.arange(octets.shape[-1])
    positions = at[:, None] + columns
    if sizes is None:
        buf[positions] = octets
    else:
        kept = columns < sizes[:, None]
        buf[positions[kept]] = octets[kept]


class _Field:
    """A field of every row: its key, and on which rows it is present (None: all)."""

    def __init__(self, number, wire, present):
        self.key = np.frombuffer(_key(number, wire), dtype=np.uint8)
        self.present = None if present is None else np.asarray(present, dtype=bool)

    def sizes(self):
        """Bytes of the field on each row, key included; 0 where absent."""
        sizes = len(self.key) + self._payload_sizes()
        return sizes if self.present is None else np.where(self.present, sizes, 0)

    def write(self, buf, at, rows):
        """Write the field of `rows` (where present) at their positions `at`."""
        if self.present is not None:
            rows = rows[self.present[rows]]
        _scatter(buf, at[rows], self.key)
        self._write_payload(buf, at + len(self.key), rows)


class Const(_Field):
    """A field with the same value on every row, given encoded, key included: all of it is written
    where another field writes its key."""

    def __init__(self, encoded, rows):
        self.key = np.frombuffer(encoded, dtype=np.uint8)
        self.present, self.rows = None, rows

    def _payload_sizes(self):
        return np.zeros(self.rows, dtype=np.int64)

    def _write_payload(self, buf, at, rows):
        pass


class Varint(_Field):
    """An integer field (int64, uint64, enum, bool); negative values as int64 does."""

    def __init__(self, number, values, present=None):
        super().__init__(number, _VARINT, present)
        self.values = np.asarray(values).astype(np.int64).view(np.uint64)

    def _payload_sizes(self):
        self._octets, self._sizes = _varints(self.values)
        return self._sizes

    def _write_payload(self, buf, at, rows):
        _scatter(buf, at[rows], self._octets[rows], self._sizes[rows])


class Fixed64(_Field):
    """A fixed64 or double field: eight little-endian bytes."""

    def __init__(self, number, values, present=None):
        super().__init__(number, _FIXED64, present)
        values = np.asarray(values)
        self.values = values.astype("<f8" if values.dtype.kind == "f" else "<u8")

    def _payload_sizes(self):
        return np.full(len(self.values), 8, dtype=np.int64)

    def _write_payload(self, buf, at, rows):
        _scatter(buf, at[rows], self.values[rows].view(np.uint8).reshape(-1, 8))


class Text(_Field):
    """A string field whose values come from a short list: `codes` index `pool`; -1 is absent."""

    def __init__(self, number, codes, pool):
        codes = np.asarray(codes, dtype=np.int64)
        super().__init__(number, _LENGTH, codes >= 0)
        self.codes = np.where(codes >= 0, codes, 0)
        encoded = [text.encode() for text in pool] or [b""]
        self.lengths = np.array([len(text) for text in encoded], dtype=np.int64)
        self.table = np.zeros((len(encoded), max(1, self.lengths.max())), dtype=np.uint8)
        for i, text in enumerate(encoded):
            self.table[i, :len(text)] = np.frombuffer(text, dtype=np.uint8)

    def _payload_sizes(self):
        self._length_octets, self._length_sizes = _varints(self.lengths.astype(np.uint64))
        return (self._length_sizes + self.lengths)[self.codes]

    def _write_payload(self, buf, at, rows):
        codes = self.codes[rows]
        _scatter(buf, at[rows], self._length_octets[codes], self._length_sizes[codes])
        _scatter(buf, at[rows] + self._length_sizes[codes], self.table[codes], self.lengths[codes])


class Message(_Field):
    """A nested message field made of `fields`, one after the other."""

    def __init__(self, number, fields, present=None):
        super().__init__(number, _LENGTH, present)
        self.fields = fields

    def _payload_sizes(self):
        self._field_sizes = [field.sizes() for field in self.fields]
        body = np.sum(self._field_sizes, axis=0)
        self._length_octets, self._length_sizes = _varints(body.astype(np.uint64))
        return self._length_sizes + body

    def _write_payload(self, buf, at, rows):
        _scatter(buf, at[rows], self._length_octets[rows], self._length_sizes[rows])
        at = at + self._length_sizes
        for field, sizes in zip(self.fields, self._field_sizes):
            field.write(buf, at, rows)
            at = at + sizes


def encode(fields):
    """The bytes of every row of a top-level field (a `Message(PACKET, ...)`), in row order."""
    sizes = fields.sizes()
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    buf = np.zeros(int(sizes.sum()), dtype=np.uint8)
    fields.write(buf, starts, np.arange(len(sizes)))
    return buf.tobytes()


def event_packets(timestamps, sequence, event_fields):
    """TracePackets of TrackEvents: `timestamps` in ns, one sequence id, the events' fields."""
    timestamps = np.asarray(timestamps, dtype=np.int64)
    return Message(PACKET, [
        Varint(TIMESTAMP, timestamps),
        Const(varint_field(TRUSTED_PACKET_SEQUENCE_ID, sequence), len(timestamps)),
        Message(TRACK_EVENT, event_fields),
    ])


def int_annotation(name, values, present=None):
    """A DebugAnnotation `name` = integer, on each row (where present)."""
    return Message(DEBUG_ANNOTATIONS, [
        Const(bytes_field(ANNOTATION_NAME, name), len(values)),
        Varint(ANNOTATION_INT, values)], present)


def double_annotation(name, values, present=None):
    """A DebugAnnotation `name` = real number, on each row (where present)."""
    return Message(DEBUG_ANNOTATIONS, [
        Const(bytes_field(ANNOTATION_NAME, name), len(values)),
        Fixed64(ANNOTATION_DOUBLE, np.asarray(values, dtype=np.float64))], present)


def text_annotation(name, codes, pool):
    """A DebugAnnotation `name` = pool[code] on each row whose code is not -1."""
    codes = np.asarray(codes, dtype=np.int64)
    return Message(DEBUG_ANNOTATIONS, [
        Const(bytes_field(ANNOTATION_NAME, name), len(codes)),
        Text(ANNOTATION_STRING, codes, pool)], codes >= 0)


# ---- Slices, instants and counters on tracks, as packet sequences.

MISSING = np.iinfo(np.int64).min  # an integer argument that a row does not have
EVENTS_PER_CHUNK = 1 << 19        # events encoded at a time: bounds the memory of a large export


def _pooled(values, rows):
    """(codes, pool) of a text column given as one str for every row, (codes, pool), or strs."""
    if isinstance(values, str):
        return np.zeros(rows, dtype=np.int64), [values]
    if isinstance(values, tuple):
        codes, pool = values
        return np.asarray(codes, dtype=np.int64), list(pool)
    pool, codes = np.unique(np.asarray(values, dtype=str), return_inverse=True)
    return codes.astype(np.int64), [str(text) for text in pool]


class Slices:
    """Slices and instants on tracks, with names and arguments, to be written as one sequence.

    `add` takes a batch column-wise: `track` uuids, `begin` and `end` in ns (no `end`: instants),
    a `name` and optionally a `category`, integer arguments `ints` (MISSING where a row has none),
    real ones `doubles` (NaN likewise), text ones `texts` (code -1 likewise). Texts are given as
    one str for every row, as (codes, pool), or as strs. The slices of one track must follow each
    other (one may begin where the previous ended), as the ops of a stream do.

    `opening` = (end, name) gives a slice a child that opens it: from the slice's begin to `end`
    (ns, -1 for none), named `name` (texts as above), without category or arguments.

    Flows link slices across tracks. Perfetto links a flow's slices in the order it reads their
    events: the first event carrying a flow id starts the flow, each next one draws an arrow from
    the previous slice, and a terminating id draws the last arrow; a terminating id read before the
    flow started is dropped. So `flows` (a flow id per row, 0: none) runs through its slices in
    the order their begins are written here, and ends at the last of them; unless a slice has the
    id in `arrivals`: then the flow ends there instead, on that slice's end event. That is for a
    slice that may begin before the flow does but ends after: the receive of a transfer is posted
    whenever its stage gets to it, and completes only once the data, sent later, has arrived.
    """

    def __init__(self):
        self._parts = []

    def __len__(self):
        return sum(len(part["track"]) for part in self._parts)

    def add(self, track, begin, name, end=None, category=None, ints=None, doubles=None,
            texts=None, flows=None, arrivals=None, opening=None):
        rows = len(track)
        begin = np.asarray(begin, dtype=np.int64)
        part = {"track": np.asarray(track, dtype=np.int64), "begin": begin,
                "end": begin if end is None else np.asarray(end, dtype=np.int64),
                "instant": np.full(rows, end is None),
                "flow": np.zeros(rows, dtype=np.int64) if flows is None else np.asarray(flows),
                "arrival": (np.zeros(rows, dtype=np.int64) if arrivals is None
                            else np.asarray(arrivals)),
                "opening_end": (np.full(rows, -1, dtype=np.int64) if opening is None
                                else np.asarray(opening[0], dtype=np.int64)),
                "opening_name": None if opening is None else _pooled(opening[1], rows),
                "name": _pooled(name, rows),
                "category": None if category is None else _pooled(category, rows),
                "ints": {k: np.asarray(v, dtype=np.int64) for k, v in (ints or {}).items()},
                "doubles": {k: np.asarray(v, dtype=np.float64) for k, v in (doubles or {}).items()},
                "texts": {k: _pooled(v, rows) for k, v in (texts or {}).items()}}
        self._parts.append(part)

    def packets(self, sequence):
        """The trace bytes of every event, in chunks, in time order on sequence `sequence`."""
        if not self._parts:
            return
        columns = self._columns()
        # Rows in (begin, end) order, events in time order with ties in row order, a row's
        # events nested (its begin, its opening's begin, its opening's end, its end): at one
        # timestamp, a slice ends before the next on its track begins (so slices that follow each
        # other never nest), and one of no length begins before it ends.
        by_time = np.lexsort((columns["end"], columns["begin"]))
        columns = {name: _take(value, by_time) for name, value in columns.items()}
        columns["terminating"] = _terminating(columns["flow"], columns["arrival"])
        slices = np.flatnonzero(~columns["instant"])
        opened = slices[columns["opening_end"][slices] >= 0]
        event_rows = np.concatenate([np.arange(len(by_time)), opened, opened, slices])
        parts = np.repeat([BEGIN, OPENING_BEGIN, OPENING_END, END],
                          [len(by_time), len(opened), len(opened), len(slices)])
        times = np.concatenate([columns["begin"], columns["begin"][opened],
                                columns["opening_end"][opened], columns["end"][slices]])
        order = np.lexsort((parts, event_rows * 2 + (parts >= OPENING_END), times))
        for start in range(0, len(order), EVENTS_PER_CHUNK):
            chunk = order[start:start + EVENTS_PER_CHUNK]
            yield encode(event_packets(times[chunk], sequence,
                                       _slice_fields(columns, event_rows[chunk], parts[chunk])))

    def _columns(self):
        """The parts as one set of columns, arguments a part lacks filled as absent."""
        parts = self._parts
        columns = {name: np.concatenate([part[name] for part in parts])
                   for name in ("track", "begin", "end", "instant", "flow", "arrival",
                                "opening_end")}

        def no_texts(part):
            return np.full(len(part["track"]), -1), []

        for name in ("name", "category", "opening_name"):
            if any(part[name] is not None for part in parts):
                columns[name] = _merge_texts([part[name] if part[name] is not None
                                              else no_texts(part) for part in parts])
        for kind, absent in (("ints", MISSING), ("doubles", np.nan)):
            names = dict.fromkeys(name for part in parts for name in part[kind])
            columns[kind] = {name: np.concatenate([
                part[kind].get(name, np.full(len(part["track"]), absent)) for part in parts])
                for name in names}
        names = dict.fromkeys(name for part in parts for name in part["texts"])
        columns["texts"] = {name: _merge_texts([part["texts"].get(name, no_texts(part))
                                                for part in parts]) for name in names}
        return columns


BEGIN, OPENING_BEGIN, OPENING_END, END = range(4)  # a slice's events, in the order they nest


def _terminating(flows, arrivals):
    """Per row (in written order), whether its begin ends its flow: the last row of each flow that
    arrives at no slice."""
    last = np.zeros(len(flows), dtype=bool)
    _, from_the_end = np.unique(flows[::-1], return_index=True)
    last[len(flows) - 1 - from_the_end] = True
    return last & (flows != 0) & ~np.isin(flows, arrivals[arrivals != 0])


def _take(value, rows):
    if isinstance(value, dict):
        return {name: _take(column, rows) for name, column in value.items()}
    if isinstance(value, tuple):
        return value[0][rows], value[1]
    return value[rows]


def _merge_texts(pooled):
    """One (codes, pool) from several, codes renumbered into the merged pool; -1 stays absent."""
    index, merged = {}, []
    for codes, part_pool in pooled:
        renumber = np.array([index.setdefault(text, len(index)) for text in part_pool] + [-1],
                            dtype=np.int64)
        merged.append(renumber[codes])  # code -1 picks the trailing -1
    return np.concatenate(merged), list(index)


def _slice_fields(columns, rows, parts):
    begins, ends = parts == BEGIN, parts == END
    types = np.where(begins & columns["instant"][rows], INSTANT,
                     np.where(begins | (parts == OPENING_BEGIN), SLICE_BEGIN, SLICE_END))
    fields = [Varint(EVENT_TYPE, types), Varint(TRACK_UUID, columns["track"][rows])]
    codes, pool = columns["name"]
    codes = np.where(begins, codes[rows], -1)
    if "opening_name" in columns:
        opening_codes, opening_pool = columns["opening_name"]
        codes = np.where(parts == OPENING_BEGIN, opening_codes[rows] + len(pool), codes)
        pool = pool + opening_pool
    fields.append(Text(EVENT_NAME, codes, pool))
    if "category" in columns:
        codes, pool = columns["category"]
        fields.append(Text(CATEGORIES, np.where(begins, codes[rows], -1), pool))
    for name, values in columns["ints"].items():
        fields.append(int_annotation(name, values[rows], begins & (values[rows] != MISSING)))
    for name, values in columns["doubles"].items():
        fields.append(double_annotation(name, values[rows], begins & ~np.isnan(values[rows])))
    for name, (codes, pool) in columns["texts"].items():
        fields.append(text_annotation(name, np.where(begins, codes[rows], -1), pool))
    flows, arrivals = columns["flow"][rows], columns["arrival"][rows]
    last = columns["terminating"][rows]
    fields.append(Fixed64(FLOW_IDS, flows, begins & (flows != 0) & ~last))
    fields.append(Fixed64(TERMINATING_FLOW_IDS, np.where(ends, arrivals, flows),
                          begins & last | ends & (arrivals != 0)))
    return fields


def counter_packets(track, times, values, sequence):
    """The trace bytes of counter values (`times` in ns), in chunks, in time order."""
    order = np.argsort(times, kind="stable")
    track, times, values = (np.asarray(column)[order] for column in (track, times, values))
    for start in range(0, len(order), EVENTS_PER_CHUNK):
        chunk = slice(start, start + EVENTS_PER_CHUNK)
        yield encode(event_packets(times[chunk], sequence, [
            Varint(EVENT_TYPE, np.full(len(times[chunk]), COUNTER_VALUE)),
            Varint(TRACK_UUID, track[chunk]),
            Fixed64(DOUBLE_COUNTER_VALUE, values[chunk].astype(np.float64))]))


# ---- Decoding: the packets back as dicts, for tests and for looking inside a trace.

def _fields(data):
    """(number, value) of each field of one message: ints for varints, bytes for the rest."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
        elif wire == _FIXED64:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == _LENGTH:
            size, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == _FIXED32:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire} at byte {pos}")
        yield number, value
    if pos != end:
        raise ValueError("truncated message")


def _read_varint(data, pos):
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _int64(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _track_descriptor(data):
    track = {"parent": None, "counter": False, "order_rank": None, "order_children": False}
    for number, value in _fields(data):
        if number == UUID:
            track["uuid"] = value
        elif number == NAME:
            track["name"] = value.decode()
        elif number == PARENT_UUID:
            track["parent"] = value
        elif number == COUNTER:
            track["counter"] = True
        elif number == CHILD_ORDERING:
            track["order_children"] = value == CHILD_ORDERING_EXPLICIT
        elif number == SIBLING_ORDER_RANK:
            track["order_rank"] = _int64(value)
    return track


def _annotation(data):
    name = value = None
    for number, raw in _fields(data):
        if number == ANNOTATION_NAME:
            name = raw.decode()
        elif number == ANNOTATION_INT:
            value = _int64(raw)
        elif number == ANNOTATION_DOUBLE:
            value = float(np.frombuffer(raw, dtype="<f8")[0])
        elif number == ANNOTATION_STRING:
            value = raw.decode()
    return name, value


def _track_event(data):
    event = {"name": None, "categories": [], "args": {}, "flow_ids": [],
             "terminating_flow_ids": [], "value": None}
    for number, value in _fields(data):
        if number == EVENT_TYPE:
            event["type"] = value
        elif number == TRACK_UUID:
            event["track"] = value
        elif number == EVENT_NAME:
            event["name"] = value.decode()
        elif number == CATEGORIES:
            event["categories"].append(value.decode())
        elif number == DEBUG_ANNOTATIONS:
            name, annotation = _annotation(value)
            event["args"][name] = annotation
        elif number == DOUBLE_COUNTER_VALUE:
            event["value"] = float(np.frombuffer(value, dtype="<f8")[0])
        elif number == FLOW_IDS:
            event["flow_ids"].append(int.from_bytes(value, "little"))
        elif number == TERMINATING_FLOW_IDS:
            event["terminating_flow_ids"].append(int.from_bytes(value, "little"))
    return event


def read_packets(data):
    """Every TracePacket of a trace, in file order, as a dict: `timestamp`, `sequence`, and
    `track` (a descriptor: uuid, name, parent, counter, order_rank, order_children) or `event`
    (type, track, name, categories, args, flow_ids, terminating_flow_ids, value)."""
    packets = []
    for number, body in _fields(data):
        if number != PACKET:
            raise ValueError(f"field {number} at the top of a trace: not a Perfetto trace")
        packet = {"timestamp": None, "sequence": None, "track": None, "event": None}
        for field, value in _fields(body):
            if field == TIMESTAMP:
                packet["timestamp"] = value
            elif field == TRUSTED_PACKET_SEQUENCE_ID:
                packet["sequence"] = value
            elif field == TRACK_DESCRIPTOR:
                packet["track"] = _track_descriptor(value)
            elif field == TRACK_EVENT:
                packet["event"] = _track_event(value)
        packets.append(packet)
    return packets


def timeline(packets):
    """The tracks, slices, instants, counter values and flow arrows of decoded packets, as
    Perfetto's trace processor reads them.

    Returns (tracks, slices, instants, counters, arrows): tracks by uuid; slices in the order they
    begin, as dicts with track, name, categories, args, begin and end (ns), `depth` and `parent`
    (the index of the slice it nests in, or None) and the flow ids of its begin event; instants
    likewise with `ts`; counters as {track uuid: [(ts, value), ...]}; arrows as (flow id, index of
    the slice it leaves, index of the slice it reaches). A SLICE_END closes the innermost open
    slice of its track, as in Perfetto; ValueError for an end with nothing open or a slice left
    open. Flows follow Perfetto's rules (`Slices` says them) on slice begin and end events; those
    on instants, which `Slices` never writes, are not followed.
    """
    tracks = {p["track"]["uuid"]: p["track"] for p in packets if p["track"]}
    slices, instants, counters, arrows = [], [], {}, []
    open_slices, flowing = {}, {}

    def link(event, at):
        for flow in event["flow_ids"]:
            if flow in flowing:
                arrows.append((flow, flowing[flow], at))
            flowing[flow] = at
        for flow in event["terminating_flow_ids"]:
            if flow in flowing:
                arrows.append((flow, flowing.pop(flow), at))

    for packet in packets:
        event = packet["event"]
        if event is None:
            continue
        ts, track = packet["timestamp"], event["track"]
        if event["type"] == SLICE_BEGIN:
            stack = open_slices.setdefault(track, [])
            slices.append(dict(event, begin=ts, end=None, depth=len(stack),
                               parent=stack[-1] if stack else None))
            stack.append(len(slices) - 1)
            link(event, len(slices) - 1)
        elif event["type"] == SLICE_END:
            if not open_slices.get(track):
                raise ValueError(f"slice end at {ts} on track {track} with no slice open")
            closed = open_slices[track].pop()
            slices[closed]["end"] = ts
            link(event, closed)
        elif event["type"] == INSTANT:
            instants.append(dict(event, ts=ts))
        elif event["type"] == COUNTER_VALUE:
            counters.setdefault(track, []).append((ts, event["value"]))
    left_open = [slices[i] for stack in open_slices.values() for i in stack]
    if left_open:
        raise ValueError(f"{len(left_open)} slice(s) never ended, e.g. {left_open[0]['name']}")
    return tracks, slices, instants, counters, arrows
