// ONNX Runtime's side of the genlens / PyTorch / ONNX Runtime speed
// comparison: runs model.onnx (exported by nets.py) on a random batch
// with the CPU execution provider at the given thread count and prints
// images/s as JSON. Run by run.sh with NODE_PATH pointing at an
// onnxruntime-node install; see README.md.
//
//   node ort_bench.js MODEL.onnx BATCH SIDE THREADS RUNS
const ort = require("onnxruntime-node");

async function main() {
  const [model, batch, side, threads, runs] = process.argv.slice(2);
  const b = Number(batch), s = Number(side), t = Number(threads), r = Number(runs);
  const sess = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: t,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const data = new Float32Array(b * 3 * s * s);
  for (let i = 0; i < data.length; i++) data[i] = Math.random() * 2 - 1;
  const feeds = { [sess.inputNames[0]]: new ort.Tensor("float32", data, [b, 3, s, s]) };
  await sess.run(feeds); // warm-up
  let sum = 0;
  for (let i = 0; i < r; i++) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    sum += Number(process.hrtime.bigint() - t0) / 1e9;
  }
  console.log(JSON.stringify({ images_per_s: b / (sum / r), threads: t }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
