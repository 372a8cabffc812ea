// The judge writes: a continuation of a prompt, and a checklist for a query. Requests: `generate`,
// `writeChecklist`.

import { post } from './engine.js';
import { loadedJudge } from './judge.js';

export const handlers = {
  /**
   * A continuation of `prompt` (the user's message in the judge's chat template when `chat`) under
   * `settings` ({maxTokens, temperature, topP, seed, stop}; greedy by default). Posts
   * `generate-token` events ({n, piece, ms}) as tokens come; resolves with the engine's result
   * ({prompt, tokens, text, stop, promptTokens}) and the time to the first token and in all, in ms.
   */
  async generate({ prompt, chat = true, settings = {} }) {
    const judge = loadedJudge();
    const t0 = performance.now();
    let n = 0;
    let firstMs = null;
    const result = await judge.generate(prompt, chat, settings, (piece) => {
      const ms = performance.now() - t0;
      firstMs ??= ms;
      post({ type: 'generate-token', n: ++n, piece, ms });
    });
    return { ...result, firstMs, ms: performance.now() - t0 };
  },

  /**
   * A checklist for `query` written by the loaded judge under `policy` (RocketEval's creation
   * prompt, or one of seed 002's: core's `CreationPolicy`), greedy, at most `maxTokens` per reply
   * (`generate-token` events as it writes), parsed as a strong model's reply is. Resolves with
   * {items (null: none found), replies, tokens, promptVersion}; the page shows the items for editing.
   */
  async writeChecklist({ query, policy = 'rocketeval', maxTokens = 512 }) {
    const judge = loadedJudge();
    let n = 0;
    return judge.writeChecklist(query, policy, maxTokens, (piece) => post({ type: 'generate-token', n: ++n, piece }));
  },
};
