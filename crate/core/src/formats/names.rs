//! Names met while reading records (models, sessions, judges, files), each stored once.
//!
//! A large file repeats a few names on every line; a record kept with its own strings costs more
//! memory than its JSON text. Readers keep numbers instead, and the names here.

use std::collections::HashMap;

/// Names met while reading, each stored once, numbered in the order first met.
#[derive(Debug, Default)]
pub struct Names {
    number: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Names {
    pub fn number(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.number.get(name) {
            return n;
        }
        let n = u32::try_from(self.names.len()).expect("fewer than 2^32 names");
        self.number.insert(name.into(), n);
        self.names.push(name.into());
        n
    }

    pub fn name(&self, n: u32) -> &str {
        &self.names[n as usize]
    }

    /// The names in the order first met.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|n| &**n)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names sorted, and each number's place among them.
    pub fn sorted(self) -> (Vec<String>, Vec<usize>) {
        let mut named: Vec<(Box<str>, u32)> = self.names.into_iter().zip(0..).collect();
        named.sort_unstable();
        let mut place = vec![0; named.len()];
        for (i, (_, n)) in named.iter().enumerate() {
            place[*n as usize] = i;
        }
        (named.into_iter().map(|(name, _)| name.into()).collect(), place)
    }
}

/// Of `n` records keyed by `key`, each one whose key an earlier record has, with that first record:
/// (repeat, first) in record order. Found by sorting, a few bytes a record.
pub fn repeats<K: Ord>(n: usize, key: impl Fn(usize) -> K) -> Vec<(usize, usize)> {
    let mut order: Vec<u32> = (0..u32::try_from(n).expect("fewer than 2^32 records")).collect();
    order.sort_by(|&a, &b| key(a as usize).cmp(&key(b as usize)).then(a.cmp(&b)));
    let mut out = Vec::new();
    for run in order.chunk_by(|&a, &b| key(a as usize) == key(b as usize)) {
        out.extend(run[1..].iter().map(|&i| (i as usize, run[0] as usize)));
    }
    out.sort_unstable();
    out
}
