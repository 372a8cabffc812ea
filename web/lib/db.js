// IndexedDB: everything the app keeps between visits, on this device only.
// Stores: `inputs` (the loaded benchmark and responses), `judgments` (one record per graded response,
// keyed by judge, model and session: written the moment a response is graded, so a reload resumes),
// `designs` (one record per pairwise comparison or Direct score of the other evaluation designs, keyed
// by judge, design, session and models), `settings`. Used by both the page and the worker.

const DB = 'rocketjudge';
const VERSION = 2;

/** @returns {Promise<IDBDatabase>} */
export function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains('inputs')) db.createObjectStore('inputs');
      if (!db.objectStoreNames.contains('settings')) db.createObjectStore('settings');
      if (!db.objectStoreNames.contains('judgments')) {
        db.createObjectStore('judgments', { keyPath: ['judge', 'model_test', 'session_id'] });
      }
      if (!db.objectStoreNames.contains('designs')) db.createObjectStore('designs', { keyPath: 'key' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error('transaction aborted'));
  });
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

export async function put(store, value, key) {
  const db = await openDb();
  const tx = db.transaction(store, 'readwrite');
  tx.objectStore(store).put(value, key);
  await done(tx);
  db.close();
}

export async function get(store, key) {
  const db = await openDb();
  const value = await request(db.transaction(store).objectStore(store).get(key));
  db.close();
  return value;
}

export async function all(store) {
  const db = await openDb();
  const values = await request(db.transaction(store).objectStore(store).getAll());
  db.close();
  return values;
}

export async function remove(store, key) {
  const db = await openDb();
  const tx = db.transaction(store, 'readwrite');
  tx.objectStore(store).delete(key);
  await done(tx);
  db.close();
}

export async function clear(store) {
  const db = await openDb();
  const tx = db.transaction(store, 'readwrite');
  tx.objectStore(store).clear();
  await done(tx);
  db.close();
}
