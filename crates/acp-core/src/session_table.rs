//! The monitor's session table: records side by side in one vector, found through a hash index
//! of their positions.
//!
//! A million sessions must fit a monitor in well under a gigabyte (`docs/SCALING.md`). A hash
//! map that holds its entries in its buckets rounds its bucket count up to a power of two and
//! keeps an eighth empty, so the memory of each entry is paid up to 2.3 times over, and every
//! page of the bucket array is touched as soon as a few entries land in it. Here the records
//! lie packed at the front of a vector (removal moves the last one into the gap), and the hash
//! table ([`hashbrown::HashTable`]) holds only each record's position: four bytes and a control
//! byte per bucket. Keys are hashed with the standard library's randomly keyed SipHash, as the
//! standard `HashMap` does, so spoofed keys cannot be chosen to collide.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

/// Most records a table holds: positions are `u32`.
pub(crate) const MAX_RECORDS: usize = u32::MAX as usize;

/// Records of type `V` keyed by `K`.
#[derive(Debug)]
pub(crate) struct SessionTable<K, V> {
    hasher: RandomState,
    /// Position in `records` of every key.
    index: HashTable<u32>,
    records: Vec<(K, V)>,
}

impl<K: Hash + Eq, V> SessionTable<K, V> {
    /// An empty table with room for `capacity` records before it grows.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        SessionTable {
            hasher: RandomState::new(),
            index: HashTable::with_capacity(capacity),
            records: Vec::with_capacity(capacity),
        }
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no record is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The position of `key`'s record.
    fn position(&self, key: &K) -> Option<usize> {
        let records = &self.records;
        self.index
            .find(self.hasher.hash_one(key), |&i| {
                records[i as usize].0 == *key
            })
            .map(|&i| i as usize)
    }

    /// Whether `key` has a record.
    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.position(key).is_some()
    }

    /// `key`'s record.
    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.position(key).map(|i| &self.records[i].1)
    }

    /// `key`'s record, to change.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.position(key).map(|i| &mut self.records[i].1)
    }

    /// Adds the record of `key`, which has none, and returns it. The caller keeps the table
    /// below [`MAX_RECORDS`].
    pub(crate) fn insert_new(&mut self, key: K, value: V) -> &mut V {
        let i = self.records.len();
        let position = u32::try_from(i).expect("the caller keeps the table below MAX_RECORDS");
        let (hasher, records) = (&self.hasher, &self.records);
        self.index
            .insert_unique(hasher.hash_one(&key), position, |&j| {
                hasher.hash_one(&records[j as usize].0)
            });
        self.records.push((key, value));
        &mut self.records[i].1
    }

    /// Removes the record at `i`: the last record moves into its place.
    fn remove_at(&mut self, i: usize) -> (K, V) {
        let records = &self.records;
        let found = self
            .index
            .find_entry(self.hasher.hash_one(&records[i].0), |&j| j as usize == i);
        if let Ok(entry) = found {
            entry.remove();
        }
        let last = self.records.len() - 1;
        if i != last {
            let records = &self.records;
            let moved = self
                .index
                .find_mut(self.hasher.hash_one(&records[last].0), |&j| {
                    j as usize == last
                });
            if let Some(position) = moved {
                // `i` < `last` ≤ `MAX_RECORDS`.
                *position = i as u32;
            }
        }
        self.records.swap_remove(i)
    }

    /// Removes every record `doomed` picks and hands each to `removed`, in one pass.
    pub(crate) fn remove_where(
        &mut self,
        mut doomed: impl FnMut(&K, &V) -> bool,
        mut removed: impl FnMut(K, V),
    ) {
        // From the back: the record that moves into a gap has been looked at already.
        for i in (0..self.records.len()).rev() {
            let (key, value) = &self.records[i];
            if doomed(key, value) {
                let (key, value) = self.remove_at(i);
                removed(key, value);
            }
        }
    }

    /// Every record, in no particular order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> {
        self.records.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16),
        Remove(u16),
        RemoveOdd,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u16..64).prop_map(Op::Insert),
            3 => (0u16..64).prop_map(Op::Remove),
            1 => Just(Op::RemoveOdd),
        ]
    }

    proptest! {
        /// Against the standard `HashMap`: the same records after any sequence of insertions
        /// and removals, one by one and in sweeps (256 random sequences of up to 200 steps).
        #[test]
        fn holds_what_a_hash_map_holds(ops in proptest::collection::vec(op(), 0..200)) {
            let mut table = SessionTable::with_capacity(2);
            let mut model = HashMap::new();
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Insert(k) => {
                        if let std::collections::hash_map::Entry::Vacant(slot) = model.entry(k) {
                            *table.insert_new(k, step) += 1;
                            slot.insert(step + 1);
                        }
                    }
                    Op::Remove(k) => {
                        let mut gone = Vec::new();
                        table.remove_where(|key, _| *key == k, |_, v| gone.push(v));
                        prop_assert_eq!(gone.pop(), model.remove(&k));
                        prop_assert!(gone.is_empty());
                    }
                    Op::RemoveOdd => {
                        let mut gone = Vec::new();
                        table.remove_where(|_, v| v % 2 == 1, |k, v| gone.push((k, v)));
                        let mut expected: Vec<(u16, usize)> =
                            model.iter().filter(|(_, v)| *v % 2 == 1).map(|(k, v)| (*k, *v)).collect();
                        model.retain(|_, v| *v % 2 == 0);
                        gone.sort_unstable();
                        expected.sort_unstable();
                        prop_assert_eq!(gone, expected);
                    }
                }
                prop_assert_eq!(table.len(), model.len());
                for k in 0..64u16 {
                    prop_assert_eq!(table.get(&k), model.get(&k));
                    prop_assert_eq!(table.contains_key(&k), model.contains_key(&k));
                }
                let mut all: Vec<(u16, usize)> = table.iter().map(|(k, v)| (*k, *v)).collect();
                let mut expected: Vec<(u16, usize)> = model.iter().map(|(k, v)| (*k, *v)).collect();
                all.sort_unstable();
                expected.sort_unstable();
                prop_assert_eq!(all, expected);
            }
        }
    }

    #[test]
    fn records_change_in_place() {
        let mut table = SessionTable::with_capacity(0);
        table.insert_new("a", 1);
        table.insert_new("b", 2);
        *table.get_mut(&"a").unwrap() += 10;
        assert_eq!((table.get(&"a"), table.get(&"b")), (Some(&11), Some(&2)));
        table.remove_where(|k, _| *k == "a", |_, _| {});
        assert_eq!((table.get(&"a"), table.get(&"b")), (None, Some(&2)));
        assert!(!table.is_empty());
        table.remove_where(|_, _| true, |_, _| {});
        assert!(table.is_empty());
    }
}
