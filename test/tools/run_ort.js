#!/usr/bin/env node
'use strict';
// Reference forward pass with ONNX Runtime (CPU).
//
// Usage: node run_ort.js MODEL.onnx DATA.npz OUT.npz
//
// DATA.npz holds one array per graph input, samples stacked on dim 0. Batch k
// of input i takes rows [k*B_i, (k+1)*B_i) modulo that array's row count,
// where B_i is dim 0 of the input in the model; the number of batches is
// ceil(n / B) for the first input. OUT.npz gets one array per graph output,
// shaped (num_batches, *output_shape).

const path = require('path');
const ort = require('onnxruntime-node');
const {readNpz, writeNpz, numel, DTYPE_NAMES} = require(path.join(__dirname, 'npz.js'));

function fail(msg) {
  console.error(`run_ort: ${msg}`);
  process.exit(1);
}

// Rows [start, start+count) of `arr` along dim 0, wrapping around.
function takeRows(arr, start, count) {
  const n = arr.shape[0];
  const rowSize = numel(arr.shape.slice(1));
  const out = new arr.data.constructor(count * rowSize);
  for (let r = 0; r < count; r++) {
    const src = ((start + r) % n) * rowSize;
    out.set(arr.data.subarray(src, src + rowSize), r * rowSize);
  }
  return out;
}

async function main() {
  const [modelPath, dataPath, outPath] = process.argv.slice(2);
  if (!outPath) fail('usage: node run_ort.js MODEL.onnx DATA.npz OUT.npz');

  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    // No graph rewrites (fusions, constant folding) and one thread, so the
    // reference computes each op as written and the same way on every run.
    graphOptimizationLevel: 'disabled',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const data = readNpz(dataPath);

  const inputs = session.inputMetadata.map((meta) => {
    const arr = data.get(meta.name);
    if (!arr) fail(`${dataPath} has no array for graph input '${meta.name}'`);
    if (!meta.isTensor) fail(`graph input '${meta.name}' is not a tensor`);
    if (arr.dtype !== meta.type) {
      fail(`input '${meta.name}': data is ${arr.dtype}, graph wants ${meta.type}`);
    }
    const shape = meta.shape;
    if (!shape.every((d) => typeof d === 'number' && d > 0)) {
      fail(`input '${meta.name}' needs a static shape, has [${shape}]`);
    }
    if (arr.shape.length !== shape.length || arr.shape[0] === 0 ||
        arr.shape.slice(1).some((d, j) => d !== shape[j + 1])) {
      fail(`input '${meta.name}': data shape [${arr.shape}] does not fit graph shape [${shape}]`);
    }
    return {name: meta.name, type: meta.type, shape, arr};
  });
  if (inputs.length === 0) fail('model has no graph inputs');

  const numBatches = Math.ceil(inputs[0].arr.shape[0] / inputs[0].shape[0]);
  const results = new Map(session.outputNames.map((n) => [n, []]));
  for (let k = 0; k < numBatches; k++) {
    const feeds = {};
    for (const inp of inputs) {
      const b = inp.shape[0];
      feeds[inp.name] = new ort.Tensor(inp.type, takeRows(inp.arr, k * b, b), inp.shape);
    }
    const out = await session.run(feeds);
    for (const [name, list] of results) list.push(out[name]);
  }

  const arrays = new Map();
  for (const [name, tensors] of results) {
    const {type, dims} = tensors[0];
    const size = numel(dims);
    if (!DTYPE_NAMES.includes(type)) fail(`output '${name}' has unsupported type ${type}`);
    const stacked = new tensors[0].data.constructor(tensors.length * size);
    tensors.forEach((t, k) => {
      if (t.type !== type || t.dims.length !== dims.length || t.dims.some((d, j) => d !== dims[j])) {
        fail(`output '${name}' changes type or shape between batches`);
      }
      stacked.set(t.data, k * size);
    });
    arrays.set(name, {dtype: type, shape: [tensors.length, ...dims], data: stacked});
  }
  writeNpz(outPath, arrays);
  for (const [name, a] of arrays) console.log(`${name}: ${a.dtype}[${a.shape.join(', ')}]`);
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
