// ONNX Runtime's side of the genlens / PyTorch / ONNX Runtime speed
// comparison: runs model.onnx (exported by nets.py, batch fixed) on a
// random batch with the CPU execution provider at the given thread count
// and prints images/s as JSON. Run by run.sh with NODE_PATH pointing at
// an onnxruntime-node install; see docs/performance-networks.md.
//
//   node ort_bench.js MODEL.onnx BATCH SIDE THREADS RUNS
//
// ORT is given its best configuration: all graph optimisations (which
// include the NCHWc layout transformer for convolutions), one inter-op
// thread, sequential execution, and its intra-op pool both with and
// without spinning (idle workers busy-wait for the next operator; that
// wins on an idle machine and loses when other processes want the
// cores), the faster of the two reported. A batch's time is the median
// of RUNS after a warm-up run, so a burst of load on a shared machine
// does not decide the figure.
const ort = require("onnxruntime-node");

async function measure(model, b, s, t, r, spin) {
  const sess = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: t,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    extra: { session: { intra_op: { allow_spinning: spin ? "1" : "0" } } },
  });
  const data = new Float32Array(b * 3 * s * s);
  for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
  const feeds = { [sess.inputNames[0]]: new ort.Tensor("float32", data, [b, 3, s, s]) };
  await sess.run(feeds); // warm-up
  const times = [];
  for (let i = 0; i < r; i++) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  await sess.release();
  times.sort((x, y) => x - y);
  return b / times[times.length >> 1];
}

async function main() {
  const [model, batch, side, threads, runs] = process.argv.slice(2);
  const b = Number(batch), s = Number(side), t = Number(threads), r = Number(runs);
  const spinning = await measure(model, b, s, t, r, true);
  const idle = await measure(model, b, s, t, r, false);
  console.log(JSON.stringify({
    images_per_s: Math.max(spinning, idle),
    spinning: spinning,
    no_spinning: idle,
    threads: t,
    version: require("onnxruntime-node/package.json").version,
  }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
