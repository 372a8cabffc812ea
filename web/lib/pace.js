// How fast a grading run goes, and how long what is left will take.
//
// The rate shown (responses per minute) is over a moving window of the last responses, each timed
// from the start to the end of its own grading (so a pause between responses never counts), the
// run's first response left out once there are others (it pays for warm-up).
//
// The time left is from the work left, not from a count of responses: a response costs the tokens the
// judge runs for it (its prompt, the response included, once, and each checklist item's question), so
// the device's measured seconds per token (over this run's responses, the first left out once there
// are others) times the tokens of the responses still to grade. Responses differ in length several
// times over; a recent average of responses of other lengths is not their time.

export class Pace {
  constructor(window = 8) {
    this.window = window;
    this.first = null; // {seconds, tokens} of the run's first response
    this.recent = [];
    this.later = { seconds: 0, tokens: 0, n: 0 }; // the responses after the first that counted their tokens
  }

  /** One response took `seconds` to grade; `tokens`: the tokens the judge ran for it (null: unknown). */
  add(seconds, tokens = null) {
    if (this.first === null) {
      this.first = { seconds, tokens };
      return;
    }
    this.recent.push(seconds);
    if (this.recent.length > this.window) this.recent.shift();
    if (tokens > 0) {
      this.later.seconds += seconds;
      this.later.tokens += tokens;
      this.later.n += 1;
    }
  }

  /** Seconds per response at the current pace; null before the first response. */
  secsPerResponse() {
    if (this.first === null) return null;
    if (!this.recent.length) return this.first.seconds;
    return this.recent.reduce((a, b) => a + b, 0) / this.recent.length;
  }

  /** Responses per minute; null before the first response. */
  perMinute() {
    const s = this.secsPerResponse();
    return s ? 60 / s : null;
  }

  /** Seconds per token the judge runs, as measured so far; null when no response counted its tokens. */
  secsPerToken() {
    if (this.later.n > 0) return this.later.seconds / this.later.tokens;
    if (this.first?.tokens > 0) return this.first.seconds / this.first.tokens;
    return null;
  }

  /**
   * Seconds left for `remaining` responses of `tokensLeft` tokens in all (null: unknown, and then at
   * the current pace per response); null before the first response.
   */
  secondsLeft(remaining, tokensLeft = null) {
    const perToken = this.secsPerToken();
    if (tokensLeft != null && perToken != null) return perToken * tokensLeft;
    const s = this.secsPerResponse();
    return s === null ? null : s * remaining;
  }
}
