// Calls the genlens proxy with the official openai npm package and
// prints what the client parsed, one JSON document, for llm_node_test.go.
// Usage: node openai_client.cjs BASE_URL API_KEY
const { OpenAI } = require('openai');

async function main() {
  const [baseURL, apiKey] = process.argv.slice(2);
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 20000 });
  const messages = [{ role: 'user', content: 'Capital of France?' }];
  const out = {};

  const { data, response } = await client.chat.completions
    .create({ model: 'tiny', messages, max_tokens: 16 })
    .withResponse();
  out.content = data.choices[0].message.content;
  out.finish_reason = data.choices[0].finish_reason;
  out.usage = data.usage;
  out.genlens = data.genlens;
  out.header = response.headers.get('x-genlens-uncertainty');

  const stream = await client.chat.completions.create({ model: 'tiny', messages, stream: true });
  out.streamed = '';
  out.chunks = 0;
  for await (const chunk of stream) {
    out.chunks++;
    out.streamed += chunk.choices[0]?.delta?.content ?? '';
  }

  try {
    await client.chat.completions.create({ model: 'overloaded', messages });
    out.error = 'none';
  } catch (err) {
    out.error = { status: err.status, name: err.constructor.name, message: err.message, code: err.code ?? null };
  }

  const bad = new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 });
  try {
    await bad.chat.completions.create({ model: 'tiny', messages });
    out.unauthorized = 'none';
  } catch (err) {
    out.unauthorized = { status: err.status, name: err.constructor.name, code: err.code ?? null };
  }
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
