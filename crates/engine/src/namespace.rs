//! One namespace: everything a session scopes (state store, RNG, clock, counters, idempotency
//! cache, exact-replay time axis), and the registry that maps `X-Wraith-Session` values to them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use indexmap::IndexMap;
use parking_lot::{Mutex, RwLock};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::api::{ClockConfig, ClockMode, Response, SessionInfo, WallClock};
use crate::fixtures::SeedData;

/// Registry key: the verbatim header value, or the shared default namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum NsKey {
    Default,
    Named(String),
}

impl NsKey {
    /// The namespace a header value (or a control-plane id) names: the value itself, verbatim
    /// (`default` is a session like any other: a worker of that name must not share the world of
    /// every client that forgot the header). An empty value names no session, so it is the
    /// headerless world (the control plane could not address an empty id to free its slot).
    pub(crate) fn from_header(session: Option<&str>) -> NsKey {
        match Self::named(session) {
            None => NsKey::Default,
            Some(s) => NsKey::Named(s.to_string()),
        }
    }

    /// The session a header value names, `None` for the headerless namespace (no header or an
    /// empty value), without building the key.
    pub(crate) fn named(session: Option<&str>) -> Option<&str> {
        session.filter(|s| !s.is_empty())
    }
}

/// The seed a namespace created without one of its own gets: the serve seed for the headerless
/// namespace, and for a session a 64-bit mix of the serve seed and its id, so parallel sessions
/// generate different ids. It is the seed the control plane reports: provisioning another
/// session with it reproduces this one's generated values exactly.
pub(crate) fn session_seed(serve_seed: u64, key: &NsKey) -> u64 {
    match key {
        NsKey::Default => serve_seed,
        NsKey::Named(s) => {
            let mut h = Sha256::new();
            h.update(b"wraith-session-seed\0");
            h.update(serve_seed.to_le_bytes());
            h.update(s.as_bytes());
            let d = h.finalize();
            let mut b = [0u8; 8];
            b.copy_from_slice(&d[..8]);
            u64::from_le_bytes(b)
        }
    }
}

/// How a namespace was set up; kept across a per-session reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// Resolved fixture set name (`None` = start empty).
    pub fixture: Option<String>,
    /// The seed of the namespace's generators, as reported: the provisioned one, else
    /// [`session_seed`]. Two namespaces with one seed generate the same values.
    pub seed: u64,
    pub clock: ClockConfig,
    pub provisioned: bool,
}

/// The ChaCha8 seed of a namespace: a hash of its seed alone.
pub(crate) fn derive_seed(settings: &Settings) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"wraith-namespace-seed\0");
    h.update(settings.seed.to_le_bytes());
    h.finalize().into()
}

/// Where a stored entity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Seeded from the fixture set and untouched since.
    Fixture,
    /// Written by this session through an exact-replayed recorded exchange.
    Replayed,
    /// Created or changed by this session on the synthesized path.
    Synthesized,
}

#[derive(Debug, Clone)]
pub(crate) struct Entity {
    pub value: Arc<Value>,
    pub origin: Origin,
    /// Path-parameter values (parents) of the request that created it, for tuple-keyed
    /// membership of nested routes; `None` when unknown (fixtures).
    pub parents: Option<Vec<String>>,
    /// What the value adds to the session's state (`util::json_size`); 0 for a fixture
    /// record, which every session shares.
    pub bytes: u64,
}

/// The store of one entity type.
#[derive(Debug, Clone, Default)]
pub(crate) struct TypeStore {
    /// Live entities by primary key, in insertion order.
    pub live: IndexMap<String, Entity>,
    /// Tombstones: deleted this session, with how (replayed or synthesized).
    pub deleted: BTreeMap<String, Origin>,
    /// Keys created (not seeded) by this session, in creation order.
    pub created: Vec<String>,
    /// The keys of `created`, for the membership test on every put (a scan of `created` made
    /// a session's n-th create cost O(n)).
    created_keys: BTreeSet<String>,
    /// Per live key: how many more records than one a create answered with that key while it
    /// was live. A key the API minted names one record; when the recordings show it minted
    /// the same key again (ids scrubbed to one value), each create made a record of its own,
    /// and each delete removes one of them: the key stays live until the last.
    copies: BTreeMap<String, u32>,
    /// Per live key this session created: the principal whose create answered it (`None`
    /// without credentials), for the `foreign_record` guard.
    creators: BTreeMap<String, Option<String>>,
}

impl TypeStore {
    /// Any write by this session on the synthesized path (creates, updates, deletes).
    pub(crate) fn has_synth_writes(&self) -> bool {
        self.live.values().any(|e| e.origin == Origin::Synthesized)
            || self.deleted.values().any(|o| *o == Origin::Synthesized)
    }

    /// The principal whose create this session answered with live record `pk`: `None` for a
    /// record the session did not create; `Some(None)` for one created without credentials.
    pub(crate) fn creator(&self, pk: &str) -> Option<Option<&str>> {
        self.creators.get(pk).map(Option::as_deref)
    }

    /// Any write by this session at all.
    pub(crate) fn has_writes(&self) -> bool {
        !self.deleted.is_empty() || self.live.values().any(|e| e.origin != Origin::Fixture)
    }
}

/// A cached idempotent answer.
#[derive(Debug, Clone)]
pub(crate) struct IdemEntry {
    pub response: Response,
    pub expires_us: i64,
    /// Digest of the request the key was first used with (path, query, body): the key is
    /// that request's, another request reusing it is refused.
    pub request: [u8; 32],
}

/// A session's cached idempotent answers, held to a byte budget: the answers are memory the
/// session takes, and a client using a fresh key for every request (as it should) would
/// otherwise grow the cache for the whole TTL. Past the budget the oldest answers are
/// forgotten first (a retry with a forgotten key runs again, as after its TTL).
#[derive(Debug, Clone, Default)]
pub(crate) struct IdemCache {
    entries: HashMap<(usize, String), (u64, IdemEntry)>,
    /// Slots in insertion order with the sequence number they were inserted under; a slot
    /// removed or inserted again since leaves a stale pair here, skipped when it comes up.
    order: std::collections::VecDeque<(u64, (usize, String))>,
    next_seq: u64,
    bytes: u64,
}

impl IdemCache {
    pub(crate) fn get(&self, slot: &(usize, String)) -> Option<&IdemEntry> {
        self.entries.get(slot).map(|(_, e)| e)
    }

    pub(crate) fn remove(&mut self, slot: &(usize, String)) {
        if let Some((_, e)) = self.entries.remove(slot) {
            self.bytes = self.bytes.saturating_sub(Self::size(slot, &e));
        }
    }

    /// Cache `entry` under `slot`, then forget the oldest answers until the cache takes at
    /// most `budget` bytes (the newest one is kept whatever its size).
    pub(crate) fn insert(&mut self, slot: (usize, String), entry: IdemEntry, budget: u64) {
        self.remove(&slot);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.bytes = self.bytes.saturating_add(Self::size(&slot, &entry));
        self.order.push_back((seq, slot.clone()));
        self.entries.insert(slot, (seq, entry));
        while self.bytes > budget && self.entries.len() > 1 {
            let Some((seq, oldest)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|(s, _)| *s == seq) {
                self.remove(&oldest);
            }
        }
        // Stale pairs never outnumber live ones by much: drop them once they do.
        if self.order.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            self.order
                .retain(|(seq, slot)| entries.get(slot).is_some_and(|(s, _)| s == seq));
        }
    }

    /// The bytes one cached answer is counted as: its body, its headers and its key.
    fn size(slot: &(usize, String), e: &IdemEntry) -> u64 {
        let headers: usize = e
            .response
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum();
        (e.response.body.len() + headers + slot.1.len()) as u64
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The digest [`IdemEntry::request`] holds.
pub(crate) fn idem_request_digest(path: &str, query: &[(String, String)], body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(path.as_bytes());
    for (k, v) in query {
        h.update([0u8]);
        h.update(k.as_bytes());
        h.update([1u8]);
        h.update(v.as_bytes());
    }
    h.update([2u8]);
    h.update(body);
    h.finalize().into()
}

/// A record an action acted on, as the acting principal acted on it: (entity type, key,
/// principal).
pub(crate) type WrappedRecord = (String, String, Option<String>);

/// A namespace's share of the state every session of the engine holds together (what
/// `[serve.limits] max_twin_state_mb` bounds): the count it last added to the engine-wide
/// total. It is taken back when the namespace is dropped (deleted, replaced by a reset, or a
/// handler's rolled-back copy), so the total follows the namespaces that exist whatever path
/// removed one. A clone (a probe's or a rollback's copy of the session) adds nothing until
/// [`Namespace::resync_tally`] installs it.
#[derive(Debug, Default)]
pub(crate) struct StateTally {
    total: Arc<AtomicU64>,
    counted: u64,
}

impl StateTally {
    /// A share of `total` that adds nothing yet.
    pub(crate) fn of(total: &Arc<AtomicU64>) -> StateTally {
        StateTally {
            total: Arc::clone(total),
            counted: 0,
        }
    }

    /// Make this namespace's share `bytes`.
    fn settle(&mut self, bytes: u64) {
        if bytes >= self.counted {
            self.total
                .fetch_add(bytes - self.counted, Ordering::Relaxed);
        } else {
            take_back(&self.total, self.counted - bytes);
        }
        self.counted = bytes;
    }

    /// Every namespace's state together, this one's as last settled.
    pub(crate) fn twin_total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

/// Subtract without wrapping below zero.
fn take_back(total: &AtomicU64, bytes: u64) {
    let _ = total.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
        Some(t.saturating_sub(bytes))
    });
}

impl Clone for StateTally {
    fn clone(&self) -> StateTally {
        StateTally::of(&self.total)
    }
}

impl Drop for StateTally {
    fn drop(&mut self) {
        take_back(&self.total, self.counted);
    }
}

/// One session's world. `Clone` so a handler can be probed on a copy without changing the
/// session ([`crate::Engine::probe_handler`]).
#[derive(Clone)]
pub(crate) struct Namespace {
    pub key: NsKey,
    pub settings: Settings,
    pub rng: ChaCha8Rng,
    /// Clock readings taken so far (the deterministic clock advances one second per reading).
    pub clock_readings: i64,
    /// How far handlers moved this namespace's clock (`clock.advance`), in microseconds; added
    /// to every reading in every clock mode.
    pub clock_offset_us: i64,
    pub counters: BTreeMap<String, i64>,
    pub idem: IdemCache,
    pub store: BTreeMap<String, TypeStore>,
    /// Exact-replay time axis: how many times each (route, exact entry, principal lane) was
    /// served (see the engine's `axis_lane`).
    pub axis: HashMap<(usize, usize, usize), usize>,
    /// Recording sessions whose exact-replay history is still consistent with this namespace's
    /// (`None` = every session): later moments come from the same recorded run.
    pub replay_sessions: Option<crate::engine::RunSet>,
    /// Among those, the runs whose recorded answers to this namespace's replayed writes are
    /// the answers it was served (`None` before its first replayed write). A preference, not
    /// a constraint: later requests that only another run recorded overrule it.
    pub answer_runs: Option<crate::engine::RunSet>,
    /// `(entity type, recorded run, key that run's create answered)` → the key this session's
    /// same create was answered with (from another run): a page served from that run shows
    /// this session's record in its counterpart's place.
    pub counterparts: BTreeMap<(String, String, String), String>,
    /// Ids of records this session's replayed creates were answered with from a recorded run
    /// the twin could not prove is this session's own (no exactness claim). A later request
    /// naming one only matches that run's moments because the twin chose the run, so it proves
    /// nothing either: such a request's moment is never claimed exact.
    pub unproven_ids: BTreeSet<String>,
    /// Member lists the session's membership actions wrote (see `Route::membership`):
    /// (list route path, its path-parameter values) → member ids in the order added.
    pub members: BTreeMap<(String, Vec<String>), Vec<String>>,
    /// Who added each member a member effect put in a list (`Route::member_effects`):
    /// (list path, member id) → the principals whose writes added it (`None` for a request
    /// without credentials); gone when the member is removed.
    pub member_adders: BTreeMap<(String, String), BTreeSet<Option<String>>>,
    /// The acting principal's own record as this session last saw it (see
    /// `Route::actor_record`): (principal, entity type) → the record's key.
    pub actors: BTreeMap<(String, String), String>,
    /// The same record as an object, from the latest answer that carried it: what a rendered
    /// answer of such a route shows there (`Engine::embed_actor_view`).
    pub actor_views: BTreeMap<(String, String), Value>,
    /// Per (principal, entity type) of `actor_views`, the fields of the view that answers the
    /// twin rendered (not replayed) changed: a value a profile update echoed. The session
    /// changed them itself, so a replayed answer that is the record
    /// (`Engine::show_own_record`) shows them as the view holds them.
    pub actor_views_made: BTreeMap<(String, String), BTreeSet<String>>,
    /// What the session's creates and updates last sent at the pointers carried fields take
    /// their values from (`Route::carried_fields`): (entity type, key) → pointer → value.
    pub carried: BTreeMap<(String, String), BTreeMap<String, Value>>,
    /// The versions of the session's records whose type a route lists versions of
    /// (`Route::record_versions`), oldest first: (entity type, key) → items.
    pub versions: BTreeMap<(String, String), Vec<Value>>,
    /// How many reads of each record moved it along a progression (`Route::read_progressions`):
    /// (entity type, key, field) → reads so far.
    pub progress: BTreeMap<(String, String, String), usize>,
    /// Fields actions set (`ActionEffect::sets`) on entities the session held no record of
    /// (neither stored nor recorded): (entity type, key) → field → value. The session's next
    /// read of the entity overlays them on its rendered answer and stores the result.
    pub pending_sets: BTreeMap<(String, String), serde_json::Map<String, Value>>,
    /// The records the session's actions made around the entity they acted on (a reblog's
    /// status, see `ActionEffect::undoes_wrappers`): (entity type, acted-on key, acting
    /// principal) → (the action's route, the wrapper's key), in the order made.
    pub wrappers: BTreeMap<WrappedRecord, Vec<(usize, String)>>,
    /// The session's last answer of each last-write-wins write (see
    /// `Route::last_write_wins`), by (origin, path): what a later read of that path answers.
    pub last_writes: BTreeMap<(Option<String>, String), Value>,
    /// Credentials no recording sent, each standing in for a recorded principal: the first
    /// the session sends plays the recordings' most active principal it has not spoken as
    /// yet, the next the one after ([`crate::engine::Engine`]'s `session_principal`).
    pub stand_ins: BTreeMap<String, String>,
    /// The recorded principals this session has spoken as (its own recorded credentials and
    /// the stand-ins above), so a stand-in is never a principal the session already is.
    pub principals_spoken: BTreeSet<String>,
    pub requests: u64,
    /// Requests this session sent with a method that can change state (not `GET`, `HEAD` or
    /// `OPTIONS`), whatever their answer: compared with recorded runs' write histories.
    pub writes_sent: u64,
    /// Per recorded run, the highest exchange index of a write moment replayed to this
    /// session: a read of that run recorded before it shows a state the session has passed.
    pub replayed_writes: BTreeMap<crate::engine::RunId, u64>,
    pub entities_seeded: u64,
    /// The bytes the session's own state takes: its records ([`Entity::bytes`] summed), the
    /// keys of its tombstones and the ids in its member lists. What `[serve.limits]
    /// max_total_state_mb` bounds.
    pub state_bytes: u64,
    /// This namespace's share of every session's state together.
    pub tally: StateTally,
    /// Values this session supplied or was minted: the outbound scrub echoes them verbatim.
    pub outbound: crate::outbound::SessionValues,
}

impl Namespace {
    /// Set what the session's own state takes, and its share of the twin's total with it.
    pub(crate) fn set_state_bytes(&mut self, bytes: u64) {
        self.state_bytes = bytes;
        self.tally.settle(bytes);
    }

    /// Count this namespace into `total` (the engine's), as it is now: for a namespace just
    /// made, or a copy installed in place of the session (a handler's rollback).
    pub(crate) fn resync_tally(&mut self, total: Option<&Arc<AtomicU64>>) {
        if let Some(total) = total {
            self.tally = StateTally::of(total);
        }
        let bytes = self.state_bytes;
        self.tally.settle(bytes);
    }

    pub(crate) fn new(key: NsKey, settings: Settings, seed: Option<&SeedData>) -> Namespace {
        let rng = ChaCha8Rng::from_seed(derive_seed(&settings));
        let mut ns = Namespace {
            key,
            settings,
            rng,
            clock_readings: 0,
            clock_offset_us: 0,
            counters: BTreeMap::new(),
            idem: IdemCache::default(),
            store: BTreeMap::new(),
            axis: HashMap::new(),
            replay_sessions: None,
            answer_runs: None,
            counterparts: BTreeMap::new(),
            members: BTreeMap::new(),
            member_adders: BTreeMap::new(),
            actors: BTreeMap::new(),
            actor_views: BTreeMap::new(),
            actor_views_made: BTreeMap::new(),
            carried: BTreeMap::new(),
            versions: BTreeMap::new(),
            progress: BTreeMap::new(),
            pending_sets: BTreeMap::new(),
            wrappers: BTreeMap::new(),
            last_writes: BTreeMap::new(),
            unproven_ids: BTreeSet::new(),
            stand_ins: BTreeMap::new(),
            principals_spoken: BTreeSet::new(),
            requests: 0,
            writes_sent: 0,
            replayed_writes: BTreeMap::new(),
            entities_seeded: 0,
            state_bytes: 0,
            tally: StateTally::default(),
            outbound: crate::outbound::SessionValues::default(),
        };
        if let Some(seed) = seed {
            ns.seed(seed);
        }
        ns
    }

    fn seed(&mut self, seed: &SeedData) {
        let mut n = 0u64;
        for (ty, records) in &seed.types {
            for (pk, value) in records {
                // Fixture values are the twin owner's own declarations, not recorded PII: the
                // outbound scrub serves them as declared.
                self.outbound.add_json(value);
                let store = self.store.entry(ty.clone()).or_default();
                store.live.insert(
                    pk.clone(),
                    Entity {
                        value: Arc::clone(value),
                        origin: Origin::Fixture,
                        parents: None,
                        bytes: 0,
                    },
                );
                n += 1;
            }
        }
        self.entities_seeded = n;
    }

    /// Take one clock reading, in unix microseconds.
    pub(crate) fn now_us(&mut self, wall: &WallClock) -> i64 {
        let base = self.settings.clock.base_epoch.saturating_mul(1_000_000);
        let t = match self.settings.clock.mode {
            ClockMode::Real => wall(),
            ClockMode::Fixed => base,
            ClockMode::Deterministic => {
                let t = base.saturating_add(self.clock_readings.saturating_mul(1_000_000));
                self.clock_readings += 1;
                t
            }
        };
        t.saturating_add(self.clock_offset_us)
    }

    /// The clock's current value without advancing it (idempotency expiry).
    pub(crate) fn peek_us(&self, wall: &WallClock) -> i64 {
        let base = self.settings.clock.base_epoch.saturating_mul(1_000_000);
        let t = match self.settings.clock.mode {
            ClockMode::Real => wall(),
            ClockMode::Fixed => base,
            ClockMode::Deterministic => {
                base.saturating_add(self.clock_readings.saturating_mul(1_000_000))
            }
        };
        t.saturating_add(self.clock_offset_us)
    }

    pub(crate) fn type_store(&self, ty: &str) -> Option<&TypeStore> {
        self.store.get(ty)
    }

    pub(crate) fn type_store_mut(&mut self, ty: &str) -> &mut TypeStore {
        self.store.entry(ty.to_string()).or_default()
    }

    /// The live record this session created under key `pk`, with its type, when exactly one
    /// type holds one.
    pub(crate) fn created_record(&self, pk: &str) -> Option<(&str, &Value)> {
        let mut found = self.store.iter().filter_map(|(ty, store)| {
            if !store.created_keys.contains(pk) {
                return None;
            }
            store.live.get(pk).map(|e| (ty.as_str(), e.value.as_ref()))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// Live entity of `ty` with key `pk`.
    pub(crate) fn entity(&self, ty: &str, pk: &str) -> Option<&Entity> {
        self.store.get(ty).and_then(|s| s.live.get(pk))
    }

    pub(crate) fn is_deleted(&self, ty: &str, pk: &str) -> Option<Origin> {
        self.store.get(ty).and_then(|s| s.deleted.get(pk).copied())
    }

    /// Store (insert or replace) an entity, clearing any tombstone.
    pub(crate) fn put(
        &mut self,
        ty: &str,
        pk: &str,
        value: Value,
        origin: Origin,
        parents: Option<Vec<String>>,
    ) {
        let store = self.type_store_mut(ty);
        let untombed = store.deleted.remove(pk).map_or(0, |_| pk.len() as u64);
        let existed = store.live.contains_key(pk);
        let parents = match (parents, store.live.get(pk)) {
            (Some(p), _) => Some(p),
            (None, Some(e)) => e.parents.clone(),
            (None, None) => None,
        };
        let bytes = crate::util::json_size(&value);
        let replaced = store.live.insert(
            pk.to_string(),
            Entity {
                value: Arc::new(value),
                origin,
                parents,
                bytes,
            },
        );
        if !existed && store.created_keys.insert(pk.to_string()) {
            store.created.push(pk.to_string());
        }
        let freed = replaced.map_or(0, |e| e.bytes) + untombed;
        self.set_state_bytes(self.state_bytes.saturating_sub(freed).saturating_add(bytes));
    }

    /// Remember that the acting `principal` created record `pk` (see [`TypeStore::creator`]).
    pub(crate) fn note_creator(&mut self, ty: &str, pk: &str, principal: Option<String>) {
        self.type_store_mut(ty)
            .creators
            .insert(pk.to_string(), principal);
    }

    /// Tombstone an entity.
    pub(crate) fn tombstone(&mut self, ty: &str, pk: &str, origin: Origin) {
        let store = self.type_store_mut(ty);
        let freed = store.live.shift_remove(pk).map_or(0, |e| e.bytes);
        store.copies.remove(pk);
        store.creators.remove(pk);
        // A tombstone is state too: its key counts, so deletes of ever new keys are bounded.
        let tombed = match store.deleted.insert(pk.to_string(), origin) {
            None => pk.len() as u64,
            Some(_) => 0,
        };
        self.set_state_bytes(
            self.state_bytes
                .saturating_sub(freed)
                .saturating_add(tombed),
        );
    }

    /// A create answered with a key it minted (not one the request named) that is already
    /// live: the answer is another record under the same key (see `TypeStore::copies`).
    /// Call before storing the new record.
    pub(crate) fn note_minted_again(&mut self, ty: &str, pk: &str) {
        let store = self.type_store_mut(ty);
        if store.live.contains_key(pk) {
            *store.copies.entry(pk.to_string()).or_insert(0) += 1;
        }
    }

    /// A delete of `pk`: when another record still holds the key, remove one of them and keep
    /// the key live (`true`); otherwise tombstone it (`false`).
    pub(crate) fn delete_one(&mut self, ty: &str, pk: &str, origin: Origin) -> bool {
        let store = self.type_store_mut(ty);
        if let Some(n) = store.copies.get_mut(pk)
            && *n > 0
        {
            *n -= 1;
            if *n == 0 {
                store.copies.remove(pk);
            }
            return true;
        }
        self.tombstone(ty, pk, origin);
        false
    }

    pub(crate) fn live_entities(&self) -> u64 {
        self.store.values().map(|s| s.live.len() as u64).sum()
    }

    pub(crate) fn info(&self) -> SessionInfo {
        SessionInfo {
            session: match &self.key {
                NsKey::Default => None,
                NsKey::Named(s) => Some(s.clone()),
            },
            provisioned: self.settings.provisioned,
            fixture: self.settings.fixture.clone(),
            seed: self.settings.seed,
            clock: self.settings.clock,
            entities: self.live_entities(),
            requests: self.requests,
        }
    }

    /// The debug dump of `GET /__wraith/session/{id}/state`.
    pub(crate) fn dump(&self) -> Value {
        let mut types = serde_json::Map::new();
        for (ty, store) in &self.store {
            let live: Vec<Value> = store.live.values().map(|e| (*e.value).clone()).collect();
            let deleted: Vec<&String> = store.deleted.keys().collect();
            types.insert(ty.clone(), json!({ "live": live, "deleted": deleted }));
        }
        let counters: serde_json::Map<String, Value> = self
            .counters
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        json!({
            "session": self.info(),
            "entities": types,
            "counters": counters,
            "clock_readings": self.clock_readings,
        })
    }
}

/// Why a namespace could not be had.
pub(crate) enum NsError {
    /// `max_namespaces` reached.
    Full(usize),
}

/// A shared namespace handle.
pub(crate) type NsHandle = Arc<Mutex<Namespace>>;

/// `Ok` = newly inserted, `Err` = the one already there.
pub(crate) type Inserted = Result<NsHandle, NsHandle>;

/// All namespaces of the process. Lookups take a read lock; only creation and removal write.
pub(crate) struct Registry {
    map: RwLock<HashMap<NsKey, Arc<Mutex<Namespace>>>>,
    max: usize,
}

impl Registry {
    pub(crate) fn new(max: usize) -> Registry {
        Registry {
            map: RwLock::new(HashMap::new()),
            max,
        }
    }

    pub(crate) fn get(&self, key: &NsKey) -> Option<Arc<Mutex<Namespace>>> {
        self.map.read().get(key).cloned()
    }

    /// The namespace for `key`, creating it with `make` when absent (under the cap).
    pub(crate) fn get_or_create(
        &self,
        key: &NsKey,
        make: impl FnOnce() -> Namespace,
    ) -> Result<Arc<Mutex<Namespace>>, NsError> {
        if let Some(ns) = self.get(key) {
            return Ok(ns);
        }
        let mut map = self.map.write();
        if let Some(ns) = map.get(key) {
            return Ok(Arc::clone(ns));
        }
        if map.len() >= self.max {
            return Err(NsError::Full(self.max));
        }
        let ns = Arc::new(Mutex::new(make()));
        map.insert(key.clone(), Arc::clone(&ns));
        Ok(ns)
    }

    /// Insert a new namespace; `Err(existing)` when one is already there.
    pub(crate) fn insert_new(
        &self,
        key: &NsKey,
        make: impl FnOnce() -> Namespace,
    ) -> Result<Inserted, NsError> {
        let mut map = self.map.write();
        if let Some(ns) = map.get(key) {
            return Ok(Err(Arc::clone(ns)));
        }
        if map.len() >= self.max {
            return Err(NsError::Full(self.max));
        }
        let ns = Arc::new(Mutex::new(make()));
        map.insert(key.clone(), Arc::clone(&ns));
        Ok(Ok(ns))
    }

    pub(crate) fn remove(&self, key: &NsKey) -> bool {
        self.map.write().remove(key).is_some()
    }

    /// Every namespace, sorted by key (default first) for stable listings.
    pub(crate) fn all(&self) -> Vec<Arc<Mutex<Namespace>>> {
        let map = self.map.read();
        let mut keys: Vec<&NsKey> = map.keys().collect();
        keys.sort();
        keys.into_iter()
            .filter_map(|k| map.get(k).cloned())
            .collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.read().len()
    }

    /// Whether a request naming `key` would have a namespace: it has one, or there is room
    /// for one under the cap.
    pub(crate) fn admits(&self, key: &NsKey) -> bool {
        let map = self.map.read();
        map.contains_key(key) || map.len() < self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_counts_its_state_into_the_total_until_it_is_dropped() {
        let total = Arc::new(AtomicU64::new(0));
        let mut a = fresh();
        a.resync_tally(Some(&total));
        a.set_state_bytes(500);
        let mut b = fresh();
        b.resync_tally(Some(&total));
        b.set_state_bytes(200);
        assert_eq!(total.load(Ordering::Relaxed), 700);
        a.set_state_bytes(100);
        assert_eq!(total.load(Ordering::Relaxed), 300);
        // A copy counts nothing until it is installed, then counts as itself.
        let mut copy = b.clone();
        assert_eq!(total.load(Ordering::Relaxed), 300);
        b.set_state_bytes(900);
        assert_eq!(total.load(Ordering::Relaxed), 1000);
        b = {
            copy.resync_tally(None);
            copy
        };
        assert_eq!(total.load(Ordering::Relaxed), 300);
        drop(a);
        assert_eq!(total.load(Ordering::Relaxed), 200);
        drop(b);
        assert_eq!(total.load(Ordering::Relaxed), 0);
    }

    fn idem_entry(body_len: usize) -> IdemEntry {
        IdemEntry {
            response: Response::plain(
                200,
                Vec::new(),
                bytes::Bytes::from(vec![b'x'; body_len]),
                crate::api::Provenance::Template,
            ),
            expires_us: i64::MAX,
            request: [0; 32],
        }
    }

    #[test]
    fn the_idempotency_cache_forgets_its_oldest_answers_past_its_budget() {
        let mut cache = IdemCache::default();
        let slot = |k: &str| (0usize, k.to_string());
        cache.insert(slot("a"), idem_entry(40), 100);
        cache.insert(slot("b"), idem_entry(40), 100);
        // Caching `a` again moves it to the back and counts it once.
        cache.insert(slot("a"), idem_entry(40), 100);
        assert_eq!(cache.len(), 2);
        cache.insert(slot("c"), idem_entry(40), 100);
        assert!(
            cache.get(&slot("b")).is_none(),
            "the oldest, b, is forgotten"
        );
        assert!(cache.get(&slot("a")).is_some() && cache.get(&slot("c")).is_some());
        // One answer past the whole budget is kept alone.
        cache.insert(slot("d"), idem_entry(500), 100);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&slot("d")).is_some());
        cache.remove(&slot("d"));
        assert_eq!((cache.len(), cache.bytes), (0, 0));
    }

    fn fresh() -> Namespace {
        let settings = Settings {
            fixture: None,
            seed: 0,
            clock: ClockConfig::default(),
            provisioned: false,
        };
        Namespace::new(NsKey::Default, settings, None)
    }

    #[test]
    fn created_keeps_creation_order_once_per_key_across_rewrites_and_deletes() {
        let mut ns = fresh();
        for pk in ["c", "a", "b"] {
            ns.put("t", pk, json!({"id": pk}), Origin::Synthesized, None);
        }
        // An update of a live key, and a re-create after a delete, add no second entry.
        ns.put(
            "t",
            "a",
            json!({"id": "a", "v": 2}),
            Origin::Synthesized,
            None,
        );
        ns.tombstone("t", "c", Origin::Synthesized);
        ns.put("t", "c", json!({"id": "c"}), Origin::Synthesized, None);
        ns.put("t", "d", json!({"id": "d"}), Origin::Synthesized, None);
        let store = ns.type_store_mut("t");
        assert_eq!(store.created, ["c", "a", "b", "d"]);
    }

    #[test]
    fn a_key_minted_three_times_survives_two_deletes_and_goes_with_the_third() {
        let mut ns = fresh();
        for _ in 0..3 {
            ns.note_minted_again("ip", "192.0.2.0");
            ns.put(
                "ip",
                "192.0.2.0",
                json!({"address": "192.0.2.0"}),
                Origin::Replayed,
                None,
            );
        }
        assert!(ns.delete_one("ip", "192.0.2.0", Origin::Synthesized));
        assert!(ns.delete_one("ip", "192.0.2.0", Origin::Synthesized));
        assert!(ns.entity("ip", "192.0.2.0").is_some());
        assert!(!ns.delete_one("ip", "192.0.2.0", Origin::Synthesized));
        assert!(ns.entity("ip", "192.0.2.0").is_none());
        assert!(ns.is_deleted("ip", "192.0.2.0").is_some());
        // A key minted once goes with its first delete.
        ns.note_minted_again("ip", "192.0.2.9");
        ns.put(
            "ip",
            "192.0.2.9",
            json!({"address": "192.0.2.9"}),
            Origin::Replayed,
            None,
        );
        assert!(!ns.delete_one("ip", "192.0.2.9", Origin::Synthesized));
    }
}
