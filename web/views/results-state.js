// The Results card's shared state: the selection every tab reads and changes (one object, imported by
// each view, never copied), and the request for a result view that applies the chosen decoding.

// `settings`: the ranking settings, core's defaults (`rankDefaults`) until the user picks a method.
// `decoding`: how item probabilities become scores (seed 003; null: as graded, the exact expectation).
export const ui = {
  tab: 'leaderboard',
  settings: null,
  methods: [],
  decoding: null,
  query: null,
  model: null,
  editing: false,
  // Unsaved checklist edits by query (session_id): {base (the checklist they started from), rows,
  // reply (a pasted reply), redraw (the open editor's list)}. They outlive a redraw of the panel, a
  // tab switch and closing the editor; saving them or "Discard changes" ends them.
  drafts: new Map(),
};

/** A result view of `judge`'s judgments of the loaded run (`ctx.scope`), computed by core in the worker
 * (see `VIEWS` in web/worker/views.js). */
export function view(ctx, judge, name, extra = {}) {
  return ctx.engine.request('view', {
    view: name,
    judge,
    scope: ctx.scope,
    ...(ui.decoding ? { decoding: ui.decoding } : {}),
    ...extra,
  });
}
