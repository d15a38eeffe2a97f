'use strict';
// Minimal .npy / .npz reader and writer, so the ORT runner needs no npm
// dependency beyond onnxruntime-node.
//
// An array is {dtype, shape, data}: dtype is an ONNX Runtime tensor type name
// ('float32', 'int64', 'bool', ...), shape an array of numbers, data the
// matching TypedArray (BigInt64Array for int64, Uint8Array for bool, Uint16Array
// holding raw bits for float16), i.e. exactly what ort.Tensor takes.

const fs = require('fs');
const zlib = require('zlib');

// numpy descr (little-endian or byte-order-free) <-> ORT type <-> TypedArray.
const DTYPES = [
  ['<f4', 'float32', Float32Array],
  ['<f8', 'float64', Float64Array],
  ['<f2', 'float16', Uint16Array],
  ['|i1', 'int8', Int8Array],
  ['<i2', 'int16', Int16Array],
  ['<i4', 'int32', Int32Array],
  ['<i8', 'int64', BigInt64Array],
  ['|u1', 'uint8', Uint8Array],
  ['<u2', 'uint16', Uint16Array],
  ['<u4', 'uint32', Uint32Array],
  ['<u8', 'uint64', BigUint64Array],
  ['|b1', 'bool', Uint8Array],
];
const BY_DESCR = new Map(DTYPES.map(([d, t, c]) => [d, {dtype: t, ctor: c}]));
const BY_TYPE = new Map(DTYPES.map(([d, t, c]) => [t, {descr: d, ctor: c}]));
// numpy spells single-byte types with '|' but also accepts '<' or '=' there.
for (const [d, t, c] of DTYPES) {
  if (d[0] === '|') {
    BY_DESCR.set('<' + d.slice(1), {dtype: t, ctor: c});
    BY_DESCR.set('=' + d.slice(1), {dtype: t, ctor: c});
  }
}

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

function numel(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

function parseNpy(buf, what = 'npy') {
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) {
    throw new Error(`${what}: not a .npy file`);
  }
  const major = buf[6];
  let headerLen, offset;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    offset = 10;
  } else if (major === 2 || major === 3) {
    headerLen = buf.readUInt32LE(8);
    offset = 12;
  } else {
    throw new Error(`${what}: unsupported .npy version ${major}`);
  }
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', offset, offset + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${what}: bad header ${header}`);
  const type = BY_DESCR.get(descr[1]);
  if (!type) throw new Error(`${what}: unsupported dtype ${descr[1]}`);
  if (fortran[1] === 'True') throw new Error(`${what}: fortran_order arrays are not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length)
      .map((s) => Number.parseInt(s.replace(/L$/, ''), 10));
  const count = numel(dims);
  const start = offset + headerLen;
  const bytes = count * type.ctor.BYTES_PER_ELEMENT;
  if (buf.length < start + bytes) throw new Error(`${what}: truncated data`);
  // Copy: the payload inside a zip is generally not aligned for the TypedArray.
  const ab = new ArrayBuffer(bytes);
  new Uint8Array(ab).set(buf.subarray(start, start + bytes));
  return {dtype: type.dtype, shape: dims, data: new type.ctor(ab)};
}

function encodeNpy(arr) {
  const type = BY_TYPE.get(arr.dtype);
  if (!type) throw new Error(`unsupported dtype ${arr.dtype}`);
  const shape = arr.shape.map(Number);
  if (arr.data.length !== numel(shape)) {
    throw new Error(`data length ${arr.data.length} does not match shape [${shape}]`);
  }
  const shapeStr = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${type.descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  // Version 1.0 header: magic, version, uint16 length, then the dict padded
  // with spaces and a final newline so the data starts 64-byte aligned.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const head = Buffer.alloc(10);
  MAGIC.copy(head, 0);
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = Buffer.from(arr.data.buffer, arr.data.byteOffset, arr.data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), data]);
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// Zip64 extra field (id 1) holds, in order, whichever of the 32-bit fields
// were saturated to 0xffffffff: uncompressed size, compressed size, offset.
function applyZip64(extra, entry) {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const size = extra.readUInt16LE(p + 2);
    if (id === 1) {
      let q = p + 4;
      for (const key of ['size', 'csize', 'offset']) {
        if (entry[key] === 0xffffffff) {
          entry[key] = Number(extra.readBigUInt64LE(q));
          q += 8;
        }
      }
    }
    p += 4 + size;
  }
}

function readZip(buf, path) {
  // The end-of-central-directory record sits in the last 22 + 65535 bytes.
  let eocd = -1;
  for (let p = buf.length - 22; p >= Math.max(0, buf.length - 22 - 65535); p--) {
    if (buf.readUInt32LE(p) === 0x06054b50) {
      eocd = p;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${path}: not a zip file`);
  let count = buf.readUInt16LE(eocd + 10);
  let cdOffset = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) {
    // Zip64 end-of-central-directory locator precedes the classic record.
    const loc = eocd - 20;
    if (loc < 0 || buf.readUInt32LE(loc) !== 0x07064b50) throw new Error(`${path}: bad zip64`);
    const z64 = Number(buf.readBigUInt64LE(loc + 8));
    count = Number(buf.readBigUInt64LE(z64 + 32));
    cdOffset = Number(buf.readBigUInt64LE(z64 + 48));
  }
  const entries = [];
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error(`${path}: bad central directory`);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const entry = {
      flags: buf.readUInt16LE(p + 8),
      method: buf.readUInt16LE(p + 10),
      crc: buf.readUInt32LE(p + 16),
      csize: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      offset: buf.readUInt32LE(p + 42),
      name: buf.toString('utf8', p + 46, p + 46 + nameLen),
    };
    applyZip64(buf.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen), entry);
    entries.push(entry);
    p += 46 + nameLen + extraLen + commentLen;
  }
  const files = new Map();
  for (const e of entries) {
    const lh = e.offset;
    if (buf.readUInt32LE(lh) !== 0x04034b50) throw new Error(`${path}: bad local header for ${e.name}`);
    if (e.flags & 1) throw new Error(`${path}: ${e.name} is encrypted`);
    // Sizes come from the central directory; the local header's may be
    // zero (data descriptor) or saturated (zip64).
    const start = lh + 30 + buf.readUInt16LE(lh + 26) + buf.readUInt16LE(lh + 28);
    const raw = buf.subarray(start, start + e.csize);
    let data;
    if (e.method === 0) data = raw;
    else if (e.method === 8) data = zlib.inflateRawSync(raw);
    else throw new Error(`${path}: ${e.name} uses unsupported compression method ${e.method}`);
    if (data.length !== e.size || crc32(data) !== e.crc) {
      throw new Error(`${path}: ${e.name} is corrupt (size or CRC mismatch)`);
    }
    files.set(e.name, data);
  }
  return files;
}

// Returns a Map from array name (entry name without .npy) to array, in the
// order the archive stores them.
function readNpz(path) {
  const arrays = new Map();
  for (const [name, data] of readZip(fs.readFileSync(path), path)) {
    const key = name.endsWith('.npy') ? name.slice(0, -4) : name;
    arrays.set(key, parseNpy(data, `${path}:${name}`));
  }
  return arrays;
}

function dosDateTime(d) {
  const time = (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1);
  const date = ((d.getFullYear() - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate();
  return {time, date};
}

// Writes a zip of stored (uncompressed) .npy entries, as np.savez does.
// `arrays` is a Map or a plain object of name -> array.
function writeNpz(path, arrays) {
  const entries = arrays instanceof Map ? [...arrays] : Object.entries(arrays);
  const {time, date} = dosDateTime(new Date());
  const parts = [];
  const central = [];
  let offset = 0;
  for (const [key, arr] of entries) {
    const name = Buffer.from(`${key}.npy`, 'utf8');
    const data = encodeNpy(arr);
    const crc = crc32(data);
    if (offset + data.length > 0xfffffffe) throw new Error('npz too large for a non-zip64 writer');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // flags: names are UTF-8
    local.writeUInt16LE(0, 8); // method: stored
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4); // version made by
    cd.writeUInt16LE(20, 6); // version needed
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(0, 10);
    cd.writeUInt16LE(time, 12);
    cd.writeUInt16LE(date, 14);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(data.length, 20);
    cd.writeUInt32LE(data.length, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    parts.push(local, name, data);
    offset += local.length + name.length + data.length;
  }
  const cdBuf = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdBuf.length, 12);
  end.writeUInt32LE(offset, 16);
  fs.writeFileSync(path, Buffer.concat([...parts, cdBuf, end]));
}

module.exports = {
  readNpz, writeNpz, parseNpy, encodeNpy, crc32, numel,
  DTYPE_NAMES: DTYPES.map(([, t]) => t),
};
