//! [`Registry`]: a service's sessions by id and owner, the limits on how many run, where
//! ids come from, and which exited sessions are kept. Pure bookkeeping: it starts, kills
//! and locks nothing, so the service holds it under one mutex and does the I/O outside.

use std::collections::HashMap;

use crate::owner::IdSource;
use crate::{Error, LimitScope, Owner, Result, SessionId};

/// What the registry needs to know of a session. The service's sessions are
/// `Arc<Session>`; the tests use plain records.
pub(crate) trait Entry: Clone {
    /// The session's id.
    fn id(&self) -> &SessionId;
    /// The owner that opened it.
    fn owner(&self) -> &Owner;
    /// Its place in the order of opens (older sessions have smaller numbers).
    fn seq(&self) -> u64;
    /// The command as the caller gave it.
    fn command(&self) -> &str;
    /// Whether its command still runs.
    fn running(&self) -> bool;
}

/// How many sessions the registry admits and keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Running sessions (and opens under way) per owner.
    pub(crate) per_owner: usize,
    /// Running sessions (and opens under way) in the whole service.
    pub(crate) total: usize,
    /// Exited sessions kept per owner before the oldest are closed.
    pub(crate) exited_per_owner: usize,
}

/// Every open session of a service, and the opens under way.
pub(crate) struct Registry<S> {
    limits: Limits,
    sessions: HashMap<SessionId, S>,
    /// Where ids come from; none is ever reused.
    ids: IdSource,
    /// Opens under way per owner; they count against the limits.
    opening: HashMap<Owner, usize>,
    /// How many sessions were opened: the next one's place in the order of opens.
    opened: u64,
}

impl<S: Entry> Registry<S> {
    /// An empty registry with `limits`.
    pub(crate) fn new(limits: Limits) -> Registry<S> {
        Registry {
            limits,
            sessions: HashMap::new(),
            ids: IdSource::new(),
            opening: HashMap::new(),
            opened: 0,
        }
    }

    /// The one place where a caller's right to a session is checked.
    pub(crate) fn lookup(&self, owner: &Owner, id: &SessionId) -> Result<S> {
        let session = self
            .sessions
            .get(id)
            .ok_or_else(|| Error::UnknownSession { id: id.clone() })?;
        if session.owner() != owner {
            return Err(Error::ForeignSession { id: id.clone() });
        }
        Ok(session.clone())
    }

    /// Takes a place for a new session of `owner`, or says which limit is reached. The
    /// place counts until [`release`](Self::release).
    pub(crate) fn reserve(&mut self, owner: &Owner) -> Result<()> {
        let limit = |limit, scope| Error::SessionLimit {
            limit,
            scope,
            running: self.owner_running(owner),
        };
        if self.owner_count(owner) >= self.limits.per_owner {
            return Err(limit(self.limits.per_owner, LimitScope::Owner));
        }
        if self.total() >= self.limits.total {
            return Err(limit(self.limits.total, LimitScope::Service));
        }
        *self.opening.entry(owner.clone()).or_default() += 1;
        Ok(())
    }

    /// Gives back a place [`reserve`](Self::reserve) took, once the open ended either way.
    pub(crate) fn release(&mut self, owner: &Owner) {
        if let Some(n) = self.opening.get_mut(owner) {
            *n -= 1;
            if *n == 0 {
                self.opening.remove(owner);
            }
        }
    }

    /// A new session's id, never issued before, and its place in the order of opens.
    pub(crate) fn fresh_id(&mut self) -> (SessionId, u64) {
        self.opened += 1;
        (self.ids.next_id(), self.opened)
    }

    /// Adds a session that was opened.
    pub(crate) fn insert(&mut self, session: S) {
        self.sessions.insert(session.id().clone(), session);
    }

    /// Forgets session `id`, whoever owns it: its id is unknown from now on.
    pub(crate) fn remove(&mut self, id: &SessionId) -> Option<S> {
        self.sessions.remove(id)
    }

    /// Forgets `owner`'s session `id` for a close: `Ok(None)` if no such session is open,
    /// [`Error::ForeignSession`] if another owner has it.
    pub(crate) fn remove_owned(&mut self, owner: &Owner, id: &SessionId) -> Result<Option<S>> {
        match self.sessions.get(id) {
            None => Ok(None),
            Some(session) if session.owner() != owner => {
                Err(Error::ForeignSession { id: id.clone() })
            }
            Some(_) => Ok(self.sessions.remove(id)),
        }
    }

    /// Forgets every session but those `keep` holds on to, and hands them over to be
    /// closed.
    pub(crate) fn remove_all(&mut self, keep: impl Fn(&S) -> bool) -> Vec<S> {
        let ids: Vec<SessionId> = self
            .sessions
            .values()
            .filter(|s| !keep(s))
            .map(|s| s.id().clone())
            .collect();
        ids.iter()
            .filter_map(|id| self.sessions.remove(id))
            .collect()
    }

    /// Forgets the oldest exited sessions of `owner` past the limit of exited sessions,
    /// and hands them over to be closed.
    pub(crate) fn remove_excess_exited(&mut self, owner: &Owner) -> Vec<S> {
        let exited: Vec<SessionId> = self
            .owned(owner)
            .into_iter()
            .filter(|s| !s.running())
            .map(|s| s.id().clone())
            .collect();
        let excess = exited.len().saturating_sub(self.limits.exited_per_owner);
        exited[..excess]
            .iter()
            .filter_map(|id| self.sessions.remove(id))
            .collect()
    }

    /// The owner's sessions, oldest first.
    pub(crate) fn owned(&self, owner: &Owner) -> Vec<S> {
        let mut owned: Vec<S> = self
            .sessions
            .values()
            .filter(|s| s.owner() == owner)
            .cloned()
            .collect();
        owned.sort_by_key(Entry::seq);
        owned
    }

    /// The ids of the owner's sessions, sorted.
    pub(crate) fn owner_ids(&self, owner: &Owner) -> Vec<SessionId> {
        let mut ids: Vec<_> = self
            .sessions
            .values()
            .filter(|s| s.owner() == owner)
            .map(|s| s.id().clone())
            .collect();
        ids.sort();
        ids
    }

    /// Every session, in no order.
    pub(crate) fn all(&self) -> impl Iterator<Item = &S> {
        self.sessions.values()
    }

    /// Running sessions and opens under way of `owner`: what its limit counts.
    fn owner_count(&self, owner: &Owner) -> usize {
        self.sessions
            .values()
            .filter(|s| s.owner() == owner && s.running())
            .count()
            + self.opening.get(owner).copied().unwrap_or(0)
    }

    /// The owner's running sessions with their commands, oldest first.
    fn owner_running(&self, owner: &Owner) -> Vec<(SessionId, String)> {
        self.owned(owner)
            .into_iter()
            .filter(|s| s.running())
            .map(|s| (s.id().clone(), s.command().to_owned()))
            .collect()
    }

    /// Running sessions and opens under way: what the service's limit counts.
    fn total(&self) -> usize {
        self.sessions.values().filter(|s| s.running()).count()
            + self.opening.values().sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;

    /// A session as the registry sees it: a record, whose `running` a test flips.
    #[derive(Clone, Debug)]
    struct Record {
        id: SessionId,
        owner: Owner,
        seq: u64,
        command: String,
        running: Rc<Cell<bool>>,
    }

    impl Entry for Record {
        fn id(&self) -> &SessionId {
            &self.id
        }
        fn owner(&self) -> &Owner {
            &self.owner
        }
        fn seq(&self) -> u64 {
            self.seq
        }
        fn command(&self) -> &str {
            &self.command
        }
        fn running(&self) -> bool {
            self.running.get()
        }
    }

    const LIMITS: Limits = Limits {
        per_owner: 2,
        total: 3,
        exited_per_owner: 1,
    };

    /// Opens a session of `owner` running `command` as the service does: a place, an id,
    /// the entry, the place given back.
    fn open(registry: &mut Registry<Record>, owner: &str, command: &str) -> Result<Record> {
        let owner = Owner::new(owner);
        registry.reserve(&owner)?;
        let (id, seq) = registry.fresh_id();
        let record = Record {
            id,
            owner: owner.clone(),
            seq,
            command: command.to_owned(),
            running: Rc::new(Cell::new(true)),
        };
        registry.insert(record.clone());
        registry.release(&owner);
        Ok(record)
    }

    fn ids(records: &[Record]) -> Vec<SessionId> {
        records.iter().map(|r| r.id.clone()).collect()
    }

    #[test]
    fn a_session_answers_its_owner_only() {
        let mut registry = Registry::new(LIMITS);
        let a = open(&mut registry, "alice", "bash").unwrap();
        assert_eq!(
            registry.lookup(&Owner::new("alice"), &a.id).unwrap().id,
            a.id
        );
        let err = registry.lookup(&Owner::new("bob"), &a.id).unwrap_err();
        assert_eq!(err.code(), "FOREIGN_SESSION");
        let err = registry
            .lookup(&Owner::new("alice"), &SessionId::new("nope"))
            .unwrap_err();
        assert_eq!(err.code(), "UNKNOWN_SESSION");

        // Closing: another owner is refused, an unknown id is nothing to do.
        let err = registry
            .remove_owned(&Owner::new("bob"), &a.id)
            .unwrap_err();
        assert_eq!(err.code(), "FOREIGN_SESSION");
        let removed = registry.remove_owned(&Owner::new("alice"), &a.id).unwrap();
        assert_eq!(removed.map(|r| r.id), Some(a.id.clone()));
        assert!(
            registry
                .remove_owned(&Owner::new("alice"), &a.id)
                .unwrap()
                .is_none()
        );
        assert_eq!(
            registry
                .lookup(&Owner::new("alice"), &a.id)
                .unwrap_err()
                .code(),
            "UNKNOWN_SESSION"
        );
    }

    #[test]
    fn the_owner_limit_counts_running_sessions_and_opens_under_way() {
        let mut registry = Registry::new(LIMITS);
        let alice = Owner::new("alice");
        let first = open(&mut registry, "alice", "python3 -q").unwrap();
        registry.reserve(&alice).unwrap();
        let Err(Error::SessionLimit {
            limit,
            scope,
            running,
        }) = registry.reserve(&alice)
        else {
            panic!("the third place is past the owner's limit of 2");
        };
        assert_eq!((limit, scope), (2, LimitScope::Owner));
        assert_eq!(running, vec![(first.id.clone(), "python3 -q".to_owned())]);
        registry.release(&alice);
        registry.reserve(&alice).unwrap();
        registry.release(&alice);

        // An exited session does not count.
        open(&mut registry, "alice", "sleep 1").unwrap();
        assert!(registry.reserve(&alice).is_err());
        first.running.set(false);
        registry.reserve(&alice).unwrap();
    }

    #[test]
    fn the_service_limit_counts_every_owner() {
        let mut registry = Registry::new(LIMITS);
        open(&mut registry, "alice", "a").unwrap();
        open(&mut registry, "alice", "b").unwrap();
        registry.reserve(&Owner::new("bob")).unwrap();
        let err = open(&mut registry, "carol", "c").unwrap_err();
        let Error::SessionLimit {
            limit,
            scope,
            running,
        } = err
        else {
            panic!("{err}");
        };
        assert_eq!((limit, scope), (3, LimitScope::Service));
        assert!(running.is_empty(), "carol runs nothing: {running:?}");
        registry.release(&Owner::new("bob"));
        open(&mut registry, "carol", "c").unwrap();
    }

    #[test]
    fn ids_are_fresh_and_sessions_come_oldest_first() {
        let mut registry = Registry::new(Limits {
            per_owner: 100,
            total: 100,
            exited_per_owner: 100,
        });
        let opened: Vec<Record> = (0..20)
            .map(|i| open(&mut registry, if i % 2 == 0 { "a" } else { "b" }, "x").unwrap())
            .collect();
        let mut all = ids(&opened);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 20, "no id repeats");
        let a: Vec<Record> = opened.iter().step_by(2).cloned().collect();
        assert_eq!(ids(&registry.owned(&Owner::new("a"))), ids(&a));
        let mut sorted = ids(&a);
        sorted.sort();
        assert_eq!(registry.owner_ids(&Owner::new("a")), sorted);
        assert_eq!(registry.all().count(), 20);
    }

    #[test]
    fn only_the_oldest_exited_sessions_past_the_limit_go() {
        let mut registry = Registry::new(Limits {
            per_owner: 10,
            total: 10,
            exited_per_owner: 1,
        });
        let alice = Owner::new("alice");
        let sessions: Vec<Record> = (0..4)
            .map(|_| open(&mut registry, "alice", "x").unwrap())
            .collect();
        let bob = open(&mut registry, "bob", "x").unwrap();
        assert!(registry.remove_excess_exited(&alice).is_empty(), "all run");
        for session in [&sessions[0], &sessions[2], &sessions[3], &bob] {
            session.running.set(false);
        }
        let gone = registry.remove_excess_exited(&alice);
        assert_eq!(ids(&gone), ids(&[sessions[0].clone(), sessions[2].clone()]));
        assert_eq!(
            ids(&registry.owned(&alice)),
            ids(&[sessions[1].clone(), sessions[3].clone()]),
            "the newest exited one stays, and the running one"
        );
        assert_eq!(
            registry.owned(&Owner::new("bob")).len(),
            1,
            "bob's are bob's"
        );
    }

    #[test]
    fn remove_all_keeps_what_it_is_told_to() {
        let mut registry = Registry::new(LIMITS);
        let a = open(&mut registry, "alice", "x").unwrap();
        let b = open(&mut registry, "bob", "x").unwrap();
        let gone = registry.remove_all(|s| s.owner != a.owner);
        assert_eq!(ids(&gone), vec![a.id.clone()]);
        assert_eq!(ids(&registry.remove_all(|_| false)), vec![b.id]);
        assert_eq!(registry.all().count(), 0);
    }
}
