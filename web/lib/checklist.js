// A checklist edit as the worker's `regrade` takes it: which items keep their grades, which are graded now.

/**
 * The edit from `old` (the checklist as graded) to the texts of the edited list (blank ones dropped):
 * {newChecklist, keep: [[newIndex, oldIndex]] (items unchanged word for word keep their grades),
 * grade: [newIndex] (new and reworded items, graded again)}.
 */
export function checklistChanges(old, texts) {
  const newChecklist = texts.map((t) => t.trim()).filter(Boolean);
  const keep = [];
  const grade = [];
  newChecklist.forEach((t, ni) => {
    const oi = old.indexOf(t);
    if (oi >= 0) keep.push([ni, oi]);
    else grade.push(ni);
  });
  return { newChecklist, keep, grade };
}
