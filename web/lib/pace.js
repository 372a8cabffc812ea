// How fast a grading run goes: seconds per response over a moving window of the last responses, each
// timed from the start to the end of its own grading (so a pause between responses never counts),
// the run's first response left out once there are others (it pays for warm-up), and from that the
// rate in responses per minute and the time left.

export class Pace {
  constructor(window = 8) {
    this.window = window;
    this.first = null;
    this.recent = [];
  }

  /** One response took `seconds` to grade. */
  add(seconds) {
    if (this.first === null) {
      this.first = seconds;
      return;
    }
    this.recent.push(seconds);
    if (this.recent.length > this.window) this.recent.shift();
  }

  /** Seconds per response at the current pace; null before the first response. */
  secsPerResponse() {
    if (this.first === null) return null;
    if (!this.recent.length) return this.first;
    return this.recent.reduce((a, b) => a + b, 0) / this.recent.length;
  }

  /** Responses per minute; null before the first response. */
  perMinute() {
    const s = this.secsPerResponse();
    return s ? 60 / s : null;
  }

  /** Seconds left for `remaining` responses; null before the first response. */
  secondsLeft(remaining) {
    const s = this.secsPerResponse();
    return s === null ? null : s * remaining;
  }
}
