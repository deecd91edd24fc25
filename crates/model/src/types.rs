//! The model proper: routes, variants, guards, header programs, entity types and indexes.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json_text::JsonText;
use crate::template::{BodyTemplate, IdShape, JsonType};

/// `model/twin.wir.json`: everything the engine needs to serve a twin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// [`crate::MODEL_SCHEMA_VERSION`] of the build that wrote it.
    pub schema_version: u32,
    /// Version of the `wraith` build that wrote it.
    pub tool_version: String,
    /// `[service] name`.
    pub twin: String,
    /// `[service] base_url` at synth time: the recorded upstream, for the self-URL rewrite.
    pub base_url: String,
    /// RFC 3339 UTC time of the newest recorded exchange; `None` when there were none.
    /// Also the model's own timestamp: synth reads no wall clock, so the model stays
    /// byte-identical for the same recordings.
    pub recorded_at: Option<String>,
    /// Recording sessions folded into this model, sorted by id.
    pub sessions: Vec<String>,
    /// Sorted by `(path, method)`.
    pub routes: Vec<Route>,
    /// Route-derived entity types, by name.
    pub entity_types: BTreeMap<String, EntityType>,
    /// What synth could not model, and why.
    pub diagnostics: Vec<Diagnostic>,
    /// Facts synth computed so an engine need not on every start (see
    /// [`crate::Precomputed`]); absent in models written before it, which the engine serves the
    /// same, computing those facts itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precomputed: Option<crate::Precomputed>,
}

/// One route template: method + path with `:param` segments.
///
/// `Default` is an empty route (no id, method or path): for building one field by field, as
/// tests do; synth lists every field, so that a new one is filled where routes are learned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// Stable id `<method>_<path words>_<8 hex>`, e.g. `get_customers_param_e1c45c51`; the hex is
    /// a hash of `METHOD path`, so it survives re-synth.
    pub id: String,
    pub method: String,
    /// `/v1/customers/:customer_id`. Parameter names are consistent per position across routes
    /// sharing a prefix, so the routes compile into one trie.
    pub path: String,
    /// Host of the requests when they went to another origin than the base URL
    /// (`https://other.example.com`); `None` for the twin's own upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Parameter names in path order.
    pub params: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_op: Option<StateOp>,
    /// The entity type this route acts on (the collection segment, e.g. `customers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    /// The parameter that names the entity (usually the last one) for read/update/delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_param: Option<String>,
    /// The parameter right before `id_param` that qualifies its value: the record's key is
    /// both spelled with a `/` between them (`alice/web` under `/repos/:owner/:name`, the
    /// repository's `full_name`), so two owners' records of one name are two records. Synth
    /// sets it where the recorded answers of such a route's type held that pair as their key;
    /// `None` (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_qualifier: Option<String>,
    /// For a create: top-level fields of the created record counted from one within each
    /// parent (the records of the type created under the same path parameters), as an
    /// issue's `number` counts in its repository. The engine answers one more than the
    /// highest the session has numbered under those parents. Synth learns a field whose values
    /// rose by one with each create under a parent in every recorded session, and repeated
    /// under two parents in one session (which a count across the type never does). Empty
    /// (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_sequences: Vec<String>,
    /// Parameters naming parent entities, as (param name, parent entity type), for nested
    /// collections such as `/orgs/:org/repos`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_params: Vec<ParentParam>,
    /// For a create whose answer carries the record it creates one key deeper, as a record of
    /// another collection's entity type (an upload answering `{"upload_to": …, "image": {…}}`
    /// creates the `images` record at `/image`): where, as a JSON pointer, as
    /// [`ActionEffect::at`] says where an action's answer carries its entity. The engine
    /// stores the object there as the created record and renders the rest of the answer as
    /// the template says. Empty (and not written) for every other route, an enveloped create
    /// of the route's own collection included, so older models read unchanged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub record_at: String,
    /// For list routes: where the items are and how the collection pages and filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<ListShape>,
    /// Candidate responses, most specific guard first; the engine takes the first whose guard
    /// holds.
    pub variants: Vec<Variant>,
    /// Exact-replay index: concrete recorded requests and their recorded responses.
    /// Sorted by key.
    pub exact: Vec<ExactEntry>,
    /// Literal upload names: file-name stems (`only-media` of `only-media.jpg`) that the
    /// route's recorded uploads sent in more than one exchange. A client generates a fresh
    /// name per upload (a timestamp, a random suffix), so an upload keys by its extension and
    /// bytes only; a name sent again is one the client chose, and then the whole name keys it
    /// too (`request_key::request_key_with`). Empty, and not written, for most routes.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub upload_names: BTreeSet<String>,
    /// Ordered path-parameter tuples seen with a non-4xx outcome (multi-parameter routes only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_param_tuples: Vec<Vec<String>>,
    /// Where the route's newest recording run answers in another shape (or status) than its
    /// earlier recordings (see [`RouteDrift`]); empty, and not written, when it has not
    /// drifted or was recorded in one run only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<RouteDrift>,
    /// For a route with no state operation that acts on a stored entity named by one of its
    /// path parameters (`POST /statuses/:id/favourite`): which entity, and which of its fields
    /// the recorded answers changed, so the engine stores them for later reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ActionEffect>,
    /// For a route with no state operation that adds records to (or removes them from) a
    /// list another route reads under the same path (`POST /lists/:id/accounts` with
    /// `account_ids[]`, then `GET /lists/:id/accounts`): which ids it sends and what they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<MembershipEffect>,
    /// For a `GET` list with one path parameter listing the records whose member list holds
    /// the record that parameter names (`GET /accounts/:id/lists`: the lists an account was
    /// added to by `POST /lists/:id/accounts`), see [`MemberOf`]. Absent (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_of: Option<MemberOf>,
    /// For a write with no state operation and no path parameters whose recorded answer a
    /// later `GET` of the same path repeated (`POST /markers`, then `GET /markers`): the
    /// session's last such answer is what that read answers (last write wins).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_write_wins: bool,
    /// For a write with no state operation whose member is not in its body: lists another
    /// route reads that the write adds a record to or removes one from (`POST
    /// /statuses/:id/bookmark` adds the status to `GET /bookmarks`; `POST
    /// /statuses/:id/favourite` adds the acting account to `GET /statuses/:id/favourited_by`;
    /// `POST /accounts/:id/unfollow` takes the account out of every list). See
    /// [`MemberEffect`]. Empty (and not written) for every other route.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_effects: Vec<MemberEffect>,
    /// For a route with no path parameters whose answers carry the acting principal's own
    /// record (`GET /accounts/verify_credentials`, or `POST /statuses` at `/account`): the
    /// engine remembers the session's latest such record per principal, the member a
    /// [`MemberSource::Actor`] effect adds. Synth sets it when, in the recorded sessions, the
    /// record agreed with every recorded actor effect's new member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_record: Option<ActorRecord>,
    /// For a create with an [`Route::actor_record`] inside its answer: the integer fields of
    /// that record each of the principal's creates steps by one (a status create's
    /// `account.statuses_count`). Synth sets it when, in the recorded sessions, at least three
    /// pairs of consecutive 2xx answers of the route for one principal showed the field, and in
    /// at least nine in ten of them the later answer one more than the earlier. Empty for most
    /// routes, and not written then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actor_steps: Vec<String>,
    /// For a write whose answer holds an array of the records its sent text names as
    /// `@name` (a status's `mentions`): how to derive that array from the text (see
    /// [`TextMentions`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_mentions: Option<TextMentions>,
    /// For a write whose answer holds an array with one object per `#name` token of its sent
    /// text (a status's `tags`): how to derive that array from the text (see [`TextTags`]).
    /// Absent (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_tags: Option<TextTags>,
    /// For a write whose answer holds a string field rendered from its sent text (a status's
    /// `content`: the text wrapped in `<p>`…`</p>`, some characters escaped, `#name` tokens
    /// turned into links): how to render it (see [`TextRendering`]). Absent (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_rendering: Option<TextRendering>,
    /// For an action route (`POST …/:id/resize`, a volume's `attach`): record fields the
    /// action sets to a value its request sent, as the next recorded read of the record showed
    /// (see [`ActionValue`]). The engine stores the request's value into the session's record
    /// after a 2xx answer, so later reads show it. Empty (and not written) otherwise, so older
    /// models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub action_values: Vec<ActionValue>,
    /// For a create: records the create makes by itself under the new record, which the
    /// session never created (an instance created from an image gets its disks and a config
    /// profile), one entry per child collection, as the recorded lists under freshly created
    /// records showed them (see [`ImplicitChildren`]). Empty (and not written) otherwise, so
    /// older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implicit_children: Vec<ImplicitChildren>,
    /// For a create under a record another create made children for by itself: answer fields
    /// that name one of those children (a balancer node's `vpc_config_id`, the VPC profile its
    /// balancer's create made), see [`ChildRef`]. Empty (and not written) otherwise, so older
    /// models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_refs: Vec<ChildRef>,
    /// For a create: counters it steps on another record its request body names (a reply's
    /// `in_reply_to_id` steps the parent's `replies_count`), one entry per naming field, as the
    /// recorded views of the named record before and after the create showed (see
    /// [`CreateCounters`]). Empty (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub create_counters: Vec<CreateCounters>,
    /// For an update: top-level fields its answers hold as timestamps (`Clock` holes) that an
    /// update leaves as they were (a record's `created`): in every recorded update whose
    /// session had seen the record before, the answer repeated the value last seen there. The
    /// engine stamps an update's other clock fields (`updated_at`) with the session's clock
    /// and answers these as the session holds them. Empty (and not written) otherwise, so
    /// older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update_keeps: Vec<String>,
    /// For a create: top-level fields of the created record that no recorded create sent and
    /// that every 2xx template holding them holds as a recorded value (never a minted key, a
    /// clock, a counter or an echo): the record's defaults (a domain's `ttl_sec: 0`, `tags:
    /// []`). A request that sends one is answered, and its record stored, with the sent value
    /// where it has the recorded value's JSON type (form text read as that type; objects taken
    /// key by key, arrays of scalars whole), as an update of the record would store it. Empty
    /// (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub create_inputs: Vec<String>,
    /// For an update that replaces its record (`PUT` with the whole record): top-level
    /// fields an update whose request left them out answers with one fixed value (a
    /// `color` reset to `null`), as every recorded update of a record its session saw before
    /// showed, moving the field there from at least two other values, or from one where other
    /// updates sent the field (see [`UpdateReset`]). The engine
    /// stores and answers that value for each such field the request did not send. Empty
    /// (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update_resets: Vec<UpdateReset>,
    /// For an update or a create whose recorded answers show more than the request sent
    /// inside a field: an object merged into the stored one (updates), array items the API
    /// expanded into records (see [`SentExpansions`]). Absent (and not written) otherwise, so
    /// older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_expansions: Option<SentExpansions>,
    /// For a `GET` that is no list route of its own but answers an array of another type's
    /// records, each carrying the value of one path parameter (`GET /timelines/tag/:tag`
    /// lists the statuses whose `tags[].name` is the tag): which parameter selects which
    /// records, where, and in what order (see [`PathFilter`]). The engine lists the session's
    /// own records that match where no recorded answer to the request exists. Absent (and
    /// not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_filter: Option<PathFilter>,
    /// For a delete: the child records deleted with the record, one entry per child type
    /// created under its path (`DELETE /widgets/:id` removes the parts
    /// `POST /widgets/:id/parts` made), see [`Cascade`]. Empty (and not written) otherwise,
    /// so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cascades: Vec<Cascade>,
    /// For a route with a [`Route::actor_record`] inside its own record (a status create's
    /// `/account`): fields of that entity type's records, wherever its answers carry them,
    /// that show one way to the record's owner and another to every other principal (see
    /// [`ViewerFields`]). Absent (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer_fields: Option<ViewerFields>,
    /// For a create or an update whose request names records by an array of keys
    /// (`media_ids[]`): the answer array that lists those records, in the order sent (a status's
    /// `media_attachments`), see [`EmbeddedList`]. Empty (and not written) otherwise, so older
    /// models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embedded_lists: Vec<EmbeddedList>,
    /// For a route whose request sends an array of objects (`keywords_attributes`): the answer
    /// array that holds one item per sent object, in the order sent, with some of each sent
    /// object's fields (a filter's `keywords`), see [`MirroredList`]. Empty (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mirrored_lists: Vec<MirroredList>,
    /// For a create whose request names records of another type by the value of one of their
    /// fields (an issue's `labels: ["bug"]` naming its repository's labels by `name`): the
    /// answer array listing those records, created under the same path parameters where none
    /// holds the value, see [`RecordsByValue`]. Empty (and not written) otherwise, so older
    /// models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records_by_value: Vec<RecordsByValue>,
    /// For a bodiless write naming a member of a record's array by a path segment (`PUT
    /// /repos/:o/:r/issues/:n/labels/:name`): the array it adds the member to or takes it
    /// out of, which it answers (see [`SegmentMember`]). Absent (and not written) otherwise, so
    /// older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_member: Option<SegmentMember>,
    /// For a `GET` or write of `<record path>/<field>` that answers one object field of the
    /// record its path names (`/firewalls/:id/rules` answering the firewall's `rules`): the
    /// field it reads, or replaces with its answer (see [`FieldView`]). Absent (and not
    /// written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_view: Option<FieldView>,
    /// For a `GET` of `<record path>/<segment>` answering one item per write of the record,
    /// oldest first, each showing the record as that write answered it (a status's
    /// `history`: its create, then each edit), see [`RecordVersions`]. Absent (and not
    /// written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_versions: Option<RecordVersions>,
    /// For a `POST` of `<record path>/<segment>` answering a new record of the path's type
    /// copied from the record the path names (`POST /volumes/:id/clone`), see
    /// [`RecordClone`]. Absent (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_clone: Option<RecordClone>,
    /// For a `GET` answering the one record of a type whose field holds a query parameter's
    /// value (`/accounts/lookup?acct=admin` answering the account `admin`), see
    /// [`QueryLookup`]. Absent (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_lookup: Option<QueryLookup>,
    /// For a create or an action whose answer copies fields of the record a request field
    /// names (an instance created with `type: g6-standard-2` answers that plan's `memory` and
    /// `vcpus` under `specs`; a volume attached to an instance answers its `label` as
    /// `linode_label`), see [`NamedRecordCopies`]. Absent (and not written) otherwise, so older
    /// models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named_record_copies: Option<NamedRecordCopies>,
    /// For a read, update or delete of a record: top-level answer fields that show what the
    /// session's last write of that record sent (a deleted status's `text`, the `status` its
    /// create or last edit sent), though the create's answer never has them (see
    /// [`CarriedField`]). Empty (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried_fields: Vec<CarriedField>,
    /// For a `GET` of `<record path>/<segment>` with carried fields (a status's `source`): the
    /// record they are the record's of, named by a path parameter, where the route has no
    /// entity type of its own (see [`CarriedRecord`]). Absent (and not written) otherwise, so
    /// older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_record: Option<CarriedRecord>,
    /// For a read of a record: top-level fields a record the session created moves through by
    /// itself, read after read (an instance `provisioning`, then `booting`, then `running`; see
    /// [`ReadProgression`]). Empty (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_progressions: Vec<ReadProgression>,
    pub latency: LatencyProfile,
    pub exchange_count: u64,
}

/// One answer field a record's read, update or delete carries from the record's writes (see
/// [`Route::carried_fields`]): in every recorded 2xx answer of the route whose record the same
/// session had created or updated sending a value at `from`, the field held the value the
/// latest of those writes sent there (at least two such answers, with two distinct values),
/// and no create answer of the record's type had the field. The engine remembers what the
/// session's creates and updates of the type send at `from` and answers it there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedField {
    /// The answer's top-level field (`text`).
    pub field: String,
    /// JSON pointer into the writes' request bodies (form bodies as the engine parses them):
    /// `/status`.
    pub from: String,
}

/// The record a sub-resource read's carried fields are of (see [`Route::carried_record`]):
/// the route's path is the type's record path followed by one literal segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedRecord {
    /// The entity type of the record (`statuses`).
    pub entity_type: String,
    /// The path parameter naming the record.
    pub record_param: String,
}

/// One field a record moves through by itself after its create (see
/// [`Route::read_progressions`]): every recorded 2xx create of the record's type answered
/// `from` there, and in at least two recorded sessions the route's successive reads of a record
/// the session had just created (before any other write naming it) showed it change. `states`
/// is the most common of those read sequences. The engine shows a record the session created
/// in `states[n]` at its `n`-th read (the last state from then on) and stores it so, while the
/// record still holds what the previous read showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadProgression {
    /// The record's top-level field (`status`).
    pub field: String,
    /// What every recorded create of the type answered there (`provisioning`).
    pub from: serde_json::Value,
    /// What successive reads show, the first read's first (`provisioning`, `provisioning`,
    /// `booting`, `running`).
    pub states: Vec<serde_json::Value>,
}

/// An answer array listing the records a request array named by key (see
/// [`Route::embedded_lists`]): in every recorded 2xx answer of the route, the array held, item
/// for item, the records of `entity_type` whose keys the request sent at `field` (and was empty
/// when the request sent none). The engine answers there the session's records of those keys,
/// as the session holds them, and stores the record so; with a key the session holds no record
/// of, the rendered array stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddedList {
    /// JSON pointer of the request's array of keys (`/media_ids`; a form's `media_ids[]`
    /// fields are the same array).
    pub field: String,
    /// JSON pointer of the array inside the answer's record (`/media_attachments`).
    pub at: String,
    /// The entity type the keys name (a key of `Model::entity_types`).
    pub entity_type: String,
}

/// An answer array listing the records a request array names by value (see
/// [`Route::records_by_value`]): in every recorded 2xx answer of the create, the array held,
/// item for item in the order sent, a record of `entity_type` whose `by` field was the sent
/// value; a value the session had no such record of under the create's path parameters was
/// answered a record created there with a fresh key, `by` set to the value and `defaults`
/// (a label created by naming it: `color: "ededed"`), which later lists of the type show.
/// The engine answers the session's record under the same path parameters whose `by` field
/// holds each value, and creates one as recorded where none does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsByValue {
    /// JSON pointer of the request's array of values (`/labels`).
    pub field: String,
    /// JSON pointer of the answer's array (`/labels`).
    pub at: String,
    /// The entity type of the listed records (`labels`).
    pub entity_type: String,
    /// The record field holding the sent value (`name`).
    pub by: String,
    /// A created record's other fields but its key, as every recorded one showed them, in
    /// recorded order.
    pub defaults: serde_json::Map<String, Value>,
}

/// An answer array whose items mirror the objects a request array sent (see
/// [`Route::mirrored_lists`]): in every recorded 2xx answer of the route, the array held one
/// item per object sent at `field`, in the order sent, each showing `fields` of its own sent
/// object (and was empty when the request sent none). The engine renders there one item per
/// sent object, from the template's items, with those fields copied from it; other item fields
/// (a minted `id`) are rendered as the template says. A request that sends nothing there is
/// answered an empty array when `empty_when_absent`, else as the template says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirroredList {
    /// JSON pointer of the request's array of objects (`/keywords_attributes`).
    pub field: String,
    /// JSON pointer of the answer's array (`/keywords`).
    pub at: String,
    /// The item fields copied from the sent object, in answer order.
    pub fields: Vec<MirroredField>,
    /// A request sending nothing at `field` is answered `[]`: the route creates records (a new
    /// record holds only what was sent), or its recorded answers to such requests were empty.
    /// An update that sends nothing there keeps what the record held.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_when_absent: bool,
    /// For a create: the entity type whose records the items are, made with the created
    /// record and under it (a filter's `keywords`, which `GET /filters/:id/keywords` lists and
    /// `POST /filters/:id/keywords` adds to). The engine mints each item's key from that type's
    /// ids, stores the item as a record of it under the created record, and keeps the created
    /// record's array in step with the session's later writes of that type under it. `None`
    /// (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<String>,
}

/// A write adding a member to, or taking it out of, a record's top-level array by a path
/// segment (see [`Route::segment_member`]): in every recorded 2xx answer of the route, an
/// array of objects, the member named by the path held `key` there (`adds`), or none did; the
/// record's own answers hold the array at `field`, the literal segment before the member's.
/// The engine applies the change to the session's stored record and answers its array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentMember {
    /// The entity type of the record holding the array (`issues`).
    pub entity_type: String,
    /// The path parameter naming that record.
    pub record_param: String,
    /// The record's top-level array field (`labels`).
    pub field: String,
    /// The path parameter naming the member.
    pub member_param: String,
    /// The item field holding the member's name (`name`).
    pub key: String,
    /// Whether the write adds the member (else it takes it out).
    pub adds: bool,
}

/// A route that is a view of one object field of a record (see [`Route::field_view`]): its
/// path is the record's own path followed by the field's name, and in the recordings its 2xx
/// answers were the field as the record's latest view in the session held it (a read), or
/// became the field the record's next view showed (a write). The engine answers a read with
/// the session's record's field, and stores a write's answer there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldView {
    /// The entity type of the record (`firewalls`).
    pub entity_type: String,
    /// The path parameter naming the record.
    pub record_param: String,
    /// The record's top-level object field (`rules`), the path's last segment.
    pub field: String,
    /// Whether the route replaces the field with its answer (else it reads it).
    pub writes: bool,
}

/// A route listing a record's versions (see [`Route::record_versions`]): in the recordings,
/// each 2xx answer of the route naming a record its session created was an array with one
/// object per 2xx create or update of the record before it, in that order, each item's fields
/// the write's answer's fields named by `fields`. The engine keeps the versions of the
/// session's records of the type as its writes answer them, and answers the route with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordVersions {
    /// The entity type of the record (`statuses`).
    pub entity_type: String,
    /// The path parameter naming the record.
    pub record_param: String,
    /// Each item field, in answer order, and where the writes' answers held it.
    pub fields: Vec<VersionField>,
}

/// A route making a copy of a record (see [`Route::record_clone`]): in the recordings, each
/// 2xx answer was a record of `entity_type` under another key than the path's, which the same
/// session then addressed as a record of the type, and whose fields in `copies` equalled the
/// path's record as the session had last seen it. The engine answers a rendered clone with a
/// fresh key, those fields copied from the session's record, and stores it as a new record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordClone {
    /// The entity type of the record copied and of the copy (`volumes`).
    pub entity_type: String,
    /// The path parameter naming the record copied.
    pub record_param: String,
    /// The copy's top-level fields taken from the record copied (`size`, `region`).
    pub copies: Vec<String>,
}

/// One field of a version item (see [`RecordVersions`]): the top-level answer field of a
/// create and of an update holding its value (an edit's `created_at` is the update's
/// `edited_at`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionField {
    /// The item's field (`created_at`).
    pub key: String,
    /// The create answer's field (`created_at`).
    pub from_create: String,
    /// The update answer's field (`edited_at`).
    pub from_update: String,
}

/// A read finding one record by a field's value (see [`Route::query_lookup`]): in the
/// recordings each 2xx answer was a record of `entity_type` whose top-level `field` held the
/// value of the query parameter `param` (or a leading part of it, the name before an `@`).
/// The engine answers a value no recording looked up with the record holding it, as the
/// session sees it, and with the route's recorded not-found answer when no record does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryLookup {
    /// The entity type of the records looked up (`accounts`).
    pub entity_type: String,
    /// The query parameter naming the record (`acct`).
    pub param: String,
    /// The record's top-level field holding that name (`acct`).
    pub field: String,
}

/// Fields a create (or an action answering the record its path names) answers as the record
/// a request field names holds them (see [`Route::named_record_copies`]): in the recordings,
/// every 2xx answer to a request that sent `field` naming a recorded record of `entity_type`
/// held, at each copy's `at`, that record's field `key`. The engine answers a request naming a
/// record the session or the recordings hold with that record's values there, so a plan no
/// recorded create chose still answers its own memory; an action also stores them into the
/// acted-on record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedRecordCopies {
    /// The top-level request body field naming the record (`type`); empty when `param` names
    /// it.
    pub field: String,
    /// The path parameter naming the record instead (`param` of `POST
    /// /linode/instances/:param/ips`, whose new address answers its instance's `region`).
    /// Absent (and not written) for a body field, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The entity type of the named records (`linode_types`).
    pub entity_type: String,
    /// The answer positions copied, in pointer order.
    pub copies: Vec<RecordCopy>,
}

/// One position a [`NamedRecordCopies`] fills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordCopy {
    /// JSON pointer of the position in the created record (`/specs/memory`).
    pub at: String,
    /// The named record's top-level field it holds (`memory`): of the position's own name, or
    /// a text field of another name where no named record had that name (`label` for a
    /// volume's `linode_label`).
    pub key: String,
    /// A JSON pointer below `key` where the held text sits in an object field of the named
    /// record (`/id` under `account`: a reply's `in_reply_to_account_id` is its parent's
    /// author's id). Empty (and not written) when `key` itself is held, so older models read
    /// unchanged.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub within: String,
}

impl RecordCopy {
    /// The value the copy takes from `record`, where it holds one (not `null`).
    pub fn held_in<'r>(&self, record: &'r Value) -> Option<&'r Value> {
        let top = record.get(&self.key)?;
        let held = if self.within.is_empty() {
            top
        } else {
            top.pointer(&self.within)?
        };
        (!held.is_null()).then_some(held)
    }
}

/// One field of a [`MirroredList`]'s items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirroredField {
    /// The item's key in the answer (`keyword`).
    pub key: String,
    /// The sent object's key it copies (`keyword`); empty when the request sent scalars, each
    /// copied whole (`labels: ["bug"]` answered `[{"name": "bug"}]`).
    pub from: String,
    /// The JSON type every recorded answer showed there: a form's `whole_word=1` is `true`.
    pub observed_type: JsonType,
}

/// How check reports name a route: `METHOD /path`, and ` on <origin>` after it for a route of
/// another origin than the twin's base URL, so the same path recorded on two hosts is two
/// rows (`route` is `METHOD /path` as `X-Wraith-Route` names it).
pub fn route_label(route: &str, origin: Option<&str>) -> String {
    match origin {
        Some(origin) => format!("{route} on {origin}"),
        None => route.to_string(),
    }
}

impl Route {
    /// The route's name in check reports ([`route_label`]).
    pub fn label(&self) -> String {
        route_label(
            &format!("{} {}", self.method, self.path),
            self.origin.as_deref(),
        )
    }

    /// The body template roots of the route's 2xx variants that answer JSON, in variant order:
    /// where passes that read what a route answers on success (record fields, list items)
    /// look, skipping error answers and non-JSON bodies.
    pub fn success_json_roots(&self) -> impl Iterator<Item = &crate::template::Node> + '_ {
        self.variants
            .iter()
            .filter(|v| (200..300).contains(&v.status))
            .filter_map(|v| match &v.body {
                BodyTemplate::Json { root } => Some(root),
                _ => None,
            })
    }
}

/// One way a route's newest recording run disagrees with its earlier recordings (see
/// [`Route::drift`]). Synth finds it by comparing the route's sessions of its latest recording
/// run (sessions in start order, a new run after a pause longer than the run gap) with its
/// sessions of every earlier run; only shapes and statuses count, never values
/// (`docs/model-format.md`, "Drift").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteDrift {
    pub kind: DriftKind,
    /// JSON pointer of the position in the 2xx answer body, array elements pooled as `[]`
    /// (`/items/[]/name`); `""` for the body itself. For [`DriftKind::StatusCodeShift`] the
    /// concrete request instead: `METHOD /path?query` (a body's hash after `#` when it had one).
    pub at: String,
    /// What the earlier recordings showed: the JSON type (`string`, `number`, `boolean`,
    /// `object`, `array`) for a type change, the status for a status shift; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<String>,
    /// What the newest run shows, as `earlier`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newer: Option<String>,
    /// Answers that back the finding on each side.
    pub earlier_answers: u64,
    pub newer_answers: u64,
    /// When the newest run began: its first session's start, RFC 3339 UTC to the second
    /// (`2026-01-10T14:05:00Z`); `YYYY-MM-DD` in models written before runs were split by time.
    pub since: String,
}

/// The kinds of drift synth measures between recordings (the reference's drift types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// A field every earlier answer had and no answer of the newest run has.
    FieldRemoved,
    /// A field every answer of the newest run has and no earlier answer had.
    AdditiveOptionalField,
    /// A field whose (non-null) JSON type was one in every earlier answer and another in
    /// every answer of the newest run.
    TypeChanged,
    /// The same concrete request answered with one status earlier and another in the newest
    /// run.
    StatusCodeShift,
}

impl DriftKind {
    /// The name as written in the model and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::FieldRemoved => "field_removed",
            DriftKind::AdditiveOptionalField => "additive_optional_field",
            DriftKind::TypeChanged => "type_changed",
            DriftKind::StatusCodeShift => "status_code_shift",
        }
    }
}

/// One record field an action route sets to a value its request sent (see
/// [`Route::action_values`]): in every recorded 2xx call of the action followed by a read of
/// the record (before any other write to it), the read showed `field` equal to the request's
/// value at `from`, and in at least one of them the record held another value before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionValue {
    /// The entity type whose record the action changes.
    pub entity_type: String,
    /// The path parameter holding the record's primary key.
    pub id_param: String,
    /// The record's top-level field.
    pub field: String,
    /// JSON pointer of the request body field (form bodies as the engine parses them) whose
    /// value the field takes. Empty: the action clears the field (every next read showed
    /// `null` there, where the record held a value before), and the engine stores `null`.
    pub from: String,
}

/// What an action route does to the entity its path names (see [`Route::action`]): synth sets
/// it when the route's recorded 2xx answers are that entity (the same primary key at the top
/// level) and some of its top-level fields differ from the entity's recorded record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionEffect {
    /// The entity type whose record the action changes.
    pub entity_type: String,
    /// The path parameter holding the entity's primary key.
    pub id_param: String,
    /// Top-level fields the recorded answers changed relative to the entity's record (sorted):
    /// the engine copies these from the answer into the stored record.
    pub fields: Vec<String>,
    /// Integer fields every recorded answer moved by the same non-zero step from the entity as
    /// the session last saw it (`favourites_count`: +1 for a favourite, -1 for an unfavourite):
    /// the engine stores the session's value plus the step, and answers with it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub counters: std::collections::BTreeMap<String, i64>,
    /// Where the answer carries the entity, as a JSON pointer: empty for the answer itself,
    /// `/reblog` when the answer is another object that embeds it (a reblog wraps the status
    /// it reblogs). `fields` and `counters` are relative to that object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub at: String,
    /// For an action whose answer does not carry the entity (`POST
    /// /admin/accounts/:id/action` answering `{}`): top-level fields the next recorded read of
    /// the entity showed set to one constant, per value of the request body field `set_by`
    /// (`"disable"` → `{"disabled": true}`); the engine stores them into the session's record.
    /// With an empty `set_by` the one entry under `""` applies to every request.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sets: BTreeMap<String, BTreeMap<String, Value>>,
    /// JSON pointer of the request body field whose value picks the entry of `sets` (empty:
    /// every request takes the `""` entry).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub set_by: String,
    /// Top-level fields the recorded answers (the entity itself, `at` empty) changed from the
    /// entity as the session last saw it without that change being stored (sorted): a value
    /// a later read no longer showed (a resize's `status: resizing`) or one that differed
    /// between answers (the `size` each resize asked for). A rendered answer keeps its
    /// template's values there; its other fields show the entity as the session holds it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered_fields: Vec<String>,
    /// Boolean answer fields whose value, in every compared recorded answer, was a boolean
    /// field of another type's record under the same key, or its negation (a follow answers
    /// `requested` as the account is `locked`, `following` as it is not), see
    /// [`FollowedField`]. The engine answers and stores them so. Empty (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub followed_fields: Vec<FollowedField>,
    /// Array fields of the record the action appends the values a request field sent to (a
    /// vote's `choices` appended to the poll's `own_votes`), see [`SentAppend`]. The engine
    /// stores and answers the session's array so. Empty (and not written) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub appends: Vec<SentAppend>,
    /// Counters inside the items of an array field of the record, stepped at the positions a
    /// request field sent (a vote steps `votes_count` of the poll's `options` it chose), see
    /// [`IndexedCounter`]. Empty (and not written) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexed_counters: Vec<IndexedCounter>,
    /// Ids of the action routes whose wrapper record this action deletes (sorted): a route
    /// answering the entity inside a new record of the same type (`at` not empty: a reblog is
    /// a status wrapping the status) makes that record, and this action, which stores on the
    /// same entity the opposite constant of a boolean that one stores (`reblogged: false`
    /// after `true`), takes the record away again (an unreblog deletes the reblog). The
    /// engine deletes the wrapper the same principal's action made for the same entity.
    /// Empty (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes_wrappers: Vec<String>,
}

/// An array field an action appends sent values to (see [`ActionEffect::appends`]): in every
/// compared recorded answer, the field was the array the session last saw followed by the
/// values of the request field `from`, in the order sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentAppend {
    /// The record's top-level array field (`own_votes`).
    pub field: String,
    /// The request's top-level body field whose values are appended (`choices`, sent as
    /// `choices[]=1` or `{"choices": [1]}`).
    pub from: String,
    /// The answers held the sent texts as numbers (a form sends `"1"`, the answer holds `1`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub numbers: bool,
}

/// A counter inside the items of an array field, stepped at the positions a request field
/// names (see [`ActionEffect::indexed_counters`]): in every compared recorded answer, the
/// array's items were the ones the session last saw, each with `member` moved by `step` once
/// for every time the request field `by` sent its position (counted from 0), and nothing else
/// changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedCounter {
    /// The record's top-level array field (`options`).
    pub field: String,
    /// The integer member of its items that moves (`votes_count`).
    pub member: String,
    /// The request's top-level body field holding the positions (`choices`).
    pub by: String,
    /// How far one naming moves the counter.
    pub step: i64,
}

/// One boolean answer field of an action that follows a field of another record (see
/// [`ActionEffect::followed_fields`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FollowedField {
    /// The answer's top-level field (`requested`).
    pub field: String,
    /// The entity type of the record it follows (`accounts`), keyed as the action's record.
    pub entity_type: String,
    /// That record's boolean field (`locked`).
    pub from: String,
    /// Whether the answer holds the field's negation (`following` is `!locked`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
}

/// What a membership action does (see [`Route::membership`]): synth sets it when, in the
/// recordings, the next read of the list route under the same path parameters lists every
/// record the action named (an add) or none of them (a remove).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembershipEffect {
    /// The `GET` route (its path template, same origin) whose answer is the member list.
    pub list_path: String,
    /// JSON pointer into the request body (form bodies as the engine parses them) holding the
    /// member ids: an array of ids or a single id.
    pub ids_field: String,
    /// The entity type the member ids are keys of: the list renders their records.
    pub member_type: String,
    /// `true` when the action adds the named records, `false` when it removes them.
    pub adds: bool,
}

/// The member list a [`Route::member_of`] list reads the other way round: synth sets it when
/// the route lists records of the list's parent type under a record of the list's member type
/// (the list's path parameter names a `lists` record and it lists `accounts`; the route's names
/// an account and it lists `lists`), membership actions (`Route::membership`) write the list,
/// and every recorded 2xx answer (a top-level array) of the route read in a session after its
/// membership writes listed exactly the parents those writes had left the named record in, at
/// least one of them, in at least one answer. The engine, once the session's membership
/// actions wrote such a list, answers the parents whose member lists hold the named record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberOf {
    /// The member list's route (its path template, same origin): `/lists/:param/accounts`.
    pub list_path: String,
}

/// One effect of a write on a member list another route reads (see [`Route::member_effects`]):
/// synth sets it when, in every recorded session where that list was read right before and
/// after the write, the member appeared (an add) or disappeared (a remove) the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberEffect {
    /// The `GET` route (its path template, same origin) whose answer is the member list.
    pub list_path: String,
    /// The entity type of the members: the list renders their records.
    pub member_type: String,
    /// `true` when the write adds the member, `false` when it removes it.
    pub adds: bool,
    /// Which record is the member, and which of the session's lists it joins or leaves.
    pub member: MemberSource,
}

/// Which record a [`MemberEffect`] adds or removes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemberSource {
    /// The record the write's path parameter `param` names. An add puts it into the list at
    /// `list_path` (a list route with no path parameters); a remove takes it out of every list
    /// at `list_path` the session holds, whatever its path parameters.
    Param { param: String },
    /// The acting principal's own record: the one the session's latest answer of a route with
    /// a [`Route::actor_record`] carried for the same principal (`Authorization`). The list is
    /// the one under the write's leading path parameters (the list of the same entity the
    /// write acts on).
    Actor,
}

/// How a write's answer lists the records its sent text names (see [`Route::text_mentions`]):
/// synth sets it when, in the recorded answers, every item of a top-level array had a string
/// field whose value the request's text field named as `@value`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextMentions {
    /// JSON pointer of the array in the answer (the created record).
    pub at: String,
    /// JSON pointer of the request body's text field.
    pub text_field: String,
    /// The item field the text names (`acct`).
    pub key: String,
    /// The entity type of the named records.
    pub entity_type: String,
    /// The fields an item carries, copied from the named record.
    pub item_keys: Vec<String>,
}

/// How a write's answer lists the `#name` tokens of its sent text (see [`Route::text_tags`]):
/// synth sets it when, in every recorded 2xx answer of the route, a top-level array held
/// exactly one object per distinct `#name` token of one and the same request text field, in
/// text order (an empty array when the text had none), and at least two answers held a
/// non-empty one. Each item is the token's name at `key` plus fields that are constants or
/// the name with a fixed prefix and suffix. An update of the same entity type carries the
/// create's rule when its recorded answers that sent the text field agreed with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextTags {
    /// JSON pointer of the array in the answer (the created record).
    pub at: String,
    /// JSON pointer of the request body's text field.
    pub text_field: String,
    /// The item field holding the token's name (`name`).
    pub key: String,
    /// Whether the name is the token lowercased (every recorded name was the lowercase of
    /// its token); otherwise the token as sent.
    pub lowercase: bool,
    /// The item's fields, in recorded order: `key` itself and every other field.
    pub fields: Vec<TagField>,
}

impl TextTags {
    /// The `#name` tokens of `text` as this rule names them (lowercased when it learned so),
    /// in text order, without repeats.
    pub fn names(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for token in hash_tokens(text) {
            let name = if self.lowercase {
                token.to_lowercase()
            } else {
                token.to_string()
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// The answer array for `text`: one item per name of [`TextTags::names`].
    pub fn items(&self, text: &str) -> Vec<Value> {
        self.names(text)
            .into_iter()
            .map(|name| {
                let item: serde_json::Map<String, Value> = self
                    .fields
                    .iter()
                    .map(|f| {
                        let v = match &f.value {
                            TagValue::Name => Value::String(name.clone()),
                            TagValue::Constant { value } => value.clone(),
                            TagValue::Affixed { prefix, suffix } => {
                                Value::String(format!("{prefix}{name}{suffix}"))
                            }
                        };
                        (f.name.clone(), v)
                    })
                    .collect();
                Value::Object(item)
            })
            .collect()
    }
}

/// The `#name` tokens of `text`, in order (repeats kept): a name is the letters, digits and
/// `_` after a `#` that does not follow a word character, `#` or `/` (so `a#b`, `##` and a
/// URL's `/#fragment` are no tokens).
pub fn hash_tokens(text: &str) -> Vec<&str> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '#' && !prev.is_some_and(|p| word(p) || p == '#' || p == '/') {
            let start = i + 1;
            let mut end = start;
            while let Some(&(j, d)) = chars.peek() {
                if !word(d) {
                    break;
                }
                end = j + d.len_utf8();
                prev = Some(d);
                chars.next();
            }
            if end > start {
                out.push(&text[start..end]);
                continue;
            }
        }
        prev = Some(c);
    }
    out
}

/// One field of a [`TextTags`] item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagField {
    /// The item's field name.
    pub name: String,
    /// How its value is made.
    pub value: TagValue,
}

/// How a [`TagField`]'s value is made from the tag's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TagValue {
    /// The name itself (the rule's `key` field).
    Name,
    /// The same value in every recorded item.
    Constant { value: Value },
    /// `prefix + name + suffix` (`url`: `http://host/tags/` + name).
    Affixed { prefix: String, suffix: String },
}

/// How a write's answer renders its sent text into a string field (see
/// [`Route::text_rendering`]): `prefix`, then the text one unit at a time, then `suffix`. A
/// unit is a token (a `sigil` of [`TextRendering::tokens`] that no word character, `/` or the
/// same sigil precedes, and the word characters after it: letters, digits, `_`), rendered as
/// its rule's `parts` joined by the word; or a character, rendered as its `escapes` entry, or
/// as itself when it has none. Synth learns it only from recorded answers it reproduces (see
/// the synth's `text_rendering`); a character no recording escaped is kept as itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextRendering {
    /// JSON pointer of the string field in the answer (the created or updated record).
    pub at: String,
    /// JSON pointer of the request body's text field.
    pub text_field: String,
    /// What every rendering starts with (`<p>`).
    pub prefix: String,
    /// What every rendering ends with (`</p>`).
    pub suffix: String,
    /// Characters rendered as something else (`'` as `&#39;`), keyed by the character.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub escapes: BTreeMap<String, String>,
    /// Tokens rendered as something else (`#name` as a link to the tag), by sigil.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<TokenRendering>,
}

/// How a [`TextRendering`] renders the tokens that start with one sigil.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRendering {
    /// The character a token starts with (`#`).
    pub sigil: String,
    /// The rendering is these joined by the token's word (without the sigil): `["<a
    /// href=\"/tags/", "\">#", "</a>"]` renders `#rust` as `<a href="/tags/rust">#rust</a>`.
    pub parts: Vec<String>,
}

impl TextRendering {
    /// `text` as the recorded API rendered it.
    pub fn render(&self, text: &str) -> String {
        let mut out = self.prefix.clone();
        for unit in text_units(text, |c| self.token(c).is_some()) {
            match unit {
                TextUnit::Token { sigil, word } => {
                    if let Some(rule) = self.token(sigil) {
                        out.push_str(&rule.parts.join(word));
                    }
                }
                TextUnit::Char(c) => {
                    let mut buf = [0u8; 4];
                    let key: &str = c.encode_utf8(&mut buf);
                    match self.escapes.get(key) {
                        Some(rep) => out.push_str(rep),
                        None => out.push(c),
                    }
                }
            }
        }
        out.push_str(&self.suffix);
        out
    }

    fn token(&self, sigil: char) -> Option<&TokenRendering> {
        self.tokens.iter().find(|t| {
            let mut cs = t.sigil.chars();
            cs.next() == Some(sigil) && cs.next().is_none()
        })
    }
}

/// One unit of a text as [`TextRendering`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextUnit<'t> {
    /// A sigil at a token start and the word characters after it.
    Token { sigil: char, word: &'t str },
    /// Any other character.
    Char(char),
}

/// The units of `text`, with `is_sigil` saying which characters start tokens: a sigil that no
/// word character, `/` or the same sigil precedes and at least one word character (letter,
/// digit, `_`) follows starts a token running to the last of those word characters.
pub fn text_units(text: &str, is_sigil: impl Fn(char) -> bool) -> Vec<TextUnit<'_>> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at_start = !prev.is_some_and(|p| word(p) || p == '/' || p == c);
        if at_start && !word(c) && !c.is_whitespace() && is_sigil(c) {
            let start = i + c.len_utf8();
            let mut end = start;
            let mut last = c;
            while let Some(&(j, d)) = chars.peek() {
                if !word(d) {
                    break;
                }
                end = j + d.len_utf8();
                last = d;
                chars.next();
            }
            if end > start {
                out.push(TextUnit::Token {
                    sigil: c,
                    word: &text[start..end],
                });
                prev = Some(last);
                continue;
            }
        }
        out.push(TextUnit::Char(c));
        prev = Some(c);
    }
    out
}

/// Where a route's answers carry the acting principal's own record (see
/// [`Route::actor_record`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorRecord {
    /// The record's entity type.
    pub entity_type: String,
    /// JSON pointer to the record in the answer: empty for the answer itself.
    pub pointer: String,
}

/// Fields of an entity type's records that depend on who is looking (see
/// [`Route::viewer_fields`]): synth sets it when, across every recorded 2xx answer, the
/// records of `entity_type` seen by their owner (the acting principal's own record at
/// `owner_at`) and those seen by another principal differ in these fields, with evidence both
/// ways and no recorded view contradicting a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerFields {
    /// The records' entity type (`statuses`).
    pub entity_type: String,
    /// The owner's entity type (`accounts`): its records' key is what the acting principal's
    /// own record is compared with.
    pub owner_type: String,
    /// JSON pointer, within a record, to the owner's record (`/account`).
    pub owner_at: String,
    /// The fields, sorted by pointer.
    pub fields: Vec<ViewerField>,
}

/// One field of a [`ViewerFields`] rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewerField {
    /// JSON pointer within the record (`/pinned`, `/account/feature_approval/current_user`).
    pub at: String,
    pub shown: ViewerShown,
}

/// How a [`ViewerField`] depends on the viewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ViewerShown {
    /// Present only in views by the owner (never in another principal's view).
    OwnerOnly,
    /// Present only in views by other principals.
    OthersOnly,
    /// Its value is a function of the viewer class and of a sibling field's value (`key`,
    /// a pointer within the record; empty: no sibling, one value per class). Each table maps
    /// the sibling's value, as compact JSON, to the field's value that class saw.
    Value {
        key: String,
        owner: BTreeMap<String, Value>,
        others: BTreeMap<String, Value>,
    },
}

/// A path parameter that selects the records a `GET` lists (see [`Route::path_filter`]):
/// synth sets it when every item of every recorded 2xx answer held the request's value of
/// `param` at `member` (not the item's own key), every listed item is a known record of
/// `entity_type`, and the recordings tell the selection apart from a fixed collection: at
/// least two distinct values of the parameter, or one value listing different records in
/// two recorded sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathFilter {
    /// The path parameter's name (`:tag` is `tag`).
    pub param: String,
    /// The listed records' entity type.
    pub entity_type: String,
    /// JSON pointer of the items array in the answer (`""`: the answer is the array).
    pub items_pointer: String,
    /// Pointer pattern inside an item, `*` standing for every element of an array
    /// (`/tags/*/name`), where each recorded item held the parameter's (percent-decoded)
    /// value.
    pub member: String,
    /// The top-level item field the recorded answers were ordered by (the primary key when it
    /// was), compared as numbers where both sides are.
    pub order_by: String,
    /// Whether the recorded answers listed `order_by` from the largest (newest first).
    pub descending: bool,
    /// How the recorded requests paged (the `limit` and `max_id`-like parameters the engine
    /// applies to the session's records).
    pub pagination: Pagination,
}

impl PathFilter {
    /// Compare two `order_by` values the way the recorded answers were ordered: digit strings
    /// as numbers (ids longer than a float holds exactly), other numbers numerically, the rest
    /// as text.
    pub fn compare_keys(a: &str, b: &str) -> std::cmp::Ordering {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
        if digits(a) && digits(b) {
            let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
            return a.len().cmp(&b.len()).then_with(|| a.cmp(b));
        }
        match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
            _ => a.cmp(b),
        }
    }
}

/// A field an update resets when its request leaves it out (see [`Route::update_resets`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateReset {
    /// The record's top-level field.
    pub field: String,
    /// The value every recorded update that did not send the field answered.
    pub value: serde_json::Value,
}

/// Child records a delete removes with its record (see [`Route::cascades`]): synth sets it
/// when some recorded session read such a child after its parent's delete and was answered
/// 404, and no session read one back after that delete with a success.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cascade {
    /// The child records' entity type.
    pub entity_type: String,
    /// Which path parameter of the child's create named the parent (0-based, in path order):
    /// a stored child whose create path held the deleted key there goes with it.
    pub parent_at: usize,
}

/// Counters a create steps on the record one of its request body fields, or its path, names
/// (see [`Route::create_counters`]): synth sets it when, in every recorded session where the named
/// record was seen before the create and again after it (with no other write naming it
/// between), each of `counters` moved by the same non-zero step, in at least two such pairs,
/// and never changed between two views of the record with no write naming it between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateCounters {
    /// JSON pointer of the top-level request body field (form bodies as the engine parses
    /// them) whose value is the named record's primary key (`/in_reply_to_id`); empty when
    /// `param` names the record.
    pub field: String,
    /// The path parameter whose value is the named record's primary key, for a create under
    /// its parent (`/widgets/:param/parts` steps the widget's `parts_count`). Absent (and not
    /// written) when `field` names the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// The entity type of the named record.
    pub entity_type: String,
    /// The record's integer fields and their step per create (`{replies_count: 1}`).
    pub counters: BTreeMap<String, i64>,
}

/// Records of one child collection a create makes by itself (see
/// [`Route::implicit_children`]): the first recorded list of `list_path` under a record a
/// session had just created held items that session never created. Each recorded such list
/// is one [`ImplicitSample`]; the engine takes the sample whose create request is nearest
/// the session's and stores copies of its items under the new record, with fresh keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImplicitChildren {
    /// The child list route's path template (`/instances/:param/disks`).
    pub list_path: String,
    /// The children's entity type (the list route's).
    pub entity_type: String,
    /// One per recorded create whose first child list was recorded, in session order;
    /// samples listing no implicit child are kept too (a create without an image makes no
    /// disk), so the nearest request decides how many.
    pub samples: Vec<ImplicitSample>,
    /// Text fields of the children spelled from a record the create's request names (a disk
    /// labelled after the image it was made from), see [`ChildText`]. Empty (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<ChildText>,
}

/// A child's text field spelled from a field of the record the create's request named (see
/// [`ImplicitChildren::texts`]): in samples whose requests named at least two different
/// records, an item's `field` was `prefix`, that record's `from` and `suffix` (`Debian 12` →
/// `Debian 12 Disk`, `Ubuntu 22.04 LTS` → `My Ubuntu 22.04 LTS Disk Profile`). The engine,
/// copying an item of the nearest sample whose field is so spelled from the sample's record,
/// spells it from the record the session's request named instead.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChildText {
    /// The child's top-level string field (`label`).
    pub field: String,
    /// JSON pointer of the create request's field naming the record (`/image`).
    pub request_pointer: String,
    /// The named record's entity type (`images`).
    pub entity_type: String,
    /// The named record's top-level string field spelled into the text (`label`).
    pub from: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub suffix: String,
}

/// A create's answer field naming an implicit child (see [`ImplicitChildren`]) of the record
/// a path parameter names (see [`Route::child_refs`]): in every recorded answer where that
/// record's children were recorded and the field held a value, the value was one child's key,
/// the child holding what the request sent at each of `matched_by`. The engine writes there
/// the key of the session's one live child of the named record that holds what the session's
/// request sent; with none or several, the rendered value stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildRef {
    /// JSON pointer of the field inside the created record (`/vpc_config_id`).
    pub pointer: String,
    /// The children's entity type.
    pub entity_type: String,
    /// The path parameter whose value is the parent record's key.
    pub parent_param: String,
    /// Child fields equal to what the request sent, in every recorded pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_by: Vec<SentMatch>,
}

/// A record field that held what the request sent at `request_pointer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentMatch {
    /// The record's top-level field.
    pub field: String,
    /// JSON pointer into the request body.
    pub request_pointer: String,
}

/// One recorded create and the implicit children its first child list showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImplicitSample {
    /// The create's JSON request body (`null` when it had none or it was not JSON).
    pub request: Value,
    /// The key the create answered (the recorded parent): values equal to it in `items` name
    /// the parent and become the session's new key.
    pub parent_key: String,
    /// The listed items the session did not create, as recorded, in list order.
    pub items: Vec<Value>,
    /// Records of another type the items name that the sample's session had created before
    /// the create, each found again through values the create's request sent (see
    /// [`ImplicitLink`]). Empty (and not written) otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<ImplicitLink>,
}

/// What an update's or a create's recorded answers made of top-level request fields (see
/// [`Route::sent_expansions`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentExpansions {
    /// Fields sent as objects that every recorded 2xx answer held as an object with every key
    /// sent, and at least one with keys not sent (`devices: {}` answered with eight slots):
    /// the engine merges the object sent into the stored one instead of replacing it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_objects: Vec<String>,
    /// Fields sent as arrays of objects whose recorded 2xx answers held, at each index, an
    /// object with every key the sent item had and more (an interface answered with its id,
    /// state and addresses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ItemExpansion>,
}

/// One array field an update's or a create's answers expand item by item (see
/// [`SentExpansions::items`]): the engine answers each sent item with a copy of the answered
/// item of the sample whose sent item is nearest, renamed as implicit children are (values the
/// sample's item sent become the session's, [`ImplicitLink`]s the session's records) and with
/// fresh values where the template mints them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemExpansion {
    /// The top-level request field (`interfaces`).
    pub field: String,
    /// Recorded pairs in session order, at most 32; the link pointers are inside `sent`.
    pub samples: Vec<ImplicitSample>,
    /// On a create: what every recorded create that did not send the field answered there
    /// (a VPC created without `subnets` answers `[]`), so the engine answers that rather than
    /// a recorded item. Absent (and not written) on updates, and when such creates answered
    /// different values or none was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_absent: Option<Value>,
}

/// A record an implicit child names without the create's request naming it (the network a
/// boot profile's interface joins, where the request named only the network's subnet): in the
/// sample's session a create of `entity_type` had answered the key `value` before, and that
/// answer held, as whole values, what the create request sent at each of `request_pointers`.
/// The engine renames `value` in the copies to the key of the session's one live record of
/// `entity_type` holding what the session's request sent at every one of those pointers; with
/// none or several such records the recorded value stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitLink {
    /// The named record's key as recorded in the items (the text of a string or number).
    pub value: String,
    /// The named record's entity type.
    pub entity_type: String,
    /// JSON pointers into the create request whose values the named record's create answer
    /// held (`/interfaces/0/subnet_id`), in document order.
    pub request_pointers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentParam {
    pub param: String,
    pub entity_type: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateOp {
    Create,
    Read,
    List,
    Update,
    Delete,
}

impl StateOp {
    pub fn as_str(self) -> &'static str {
        match self {
            StateOp::Create => "create",
            StateOp::Read => "read",
            StateOp::List => "list",
            StateOp::Update => "update",
            StateOp::Delete => "delete",
        }
    }
}

/// How a list route's body holds its items and how it pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListShape {
    /// JSON pointer to the items array in the body: `""` when the body is the array itself,
    /// `/data` for `{"data":[...]}`.
    pub items_pointer: String,
    pub pagination: Pagination,
    /// Query parameters the recordings show filtering the collection by equality
    /// (the parameter name equals an item field name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// A request header carrying a JSON filter document (e.g. `x-filter`), lowercase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_header: Option<String>,
    /// Envelope fields holding counts that must agree with the served items
    /// (`total`, `results`, `pages`, `has_more`), as JSON pointers with their meaning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub envelope: Vec<EnvelopeField>,
    /// For a list under a parent path parameter whose items name that parent only inside an
    /// array of each item (the collections an account is an item of): the pointer pattern,
    /// `*` standing for every element of an array (`/items/*/account_id`), where recorded
    /// items held the request's last path parameter (and none held only other values). The
    /// pattern names the parent's collection (by its array or as a foreign key field). The
    /// engine then lists the session's own records of the type that hold the requested parent
    /// there. Absent (and not written) when a top-level field names the parent, or nothing
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_member: Option<String>,
    /// Query parameters, possibly repeated (`types[]=mention&types[]=follow`), whose values
    /// keep (or, `exclude`, drop) the items whose field takes one of them, where the parameter
    /// and the field are named differently (same-named ones are [`ListShape::filters`]).
    /// Absent, and not written, when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_filters: Vec<SetFilter>,
    /// Query parameters bounding the listed items' keys from below (`since_id` on a
    /// timeline): every recorded answer to a request sending one (an integer) listed only
    /// items whose integer key lies above it, one such answer listed an item, and the route's
    /// recorded items hold a key at or below a value sent (so the parameter left something
    /// out). The engine lists only the items above the value sent. Absent, and not written,
    /// when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lower_bounds: Vec<String>,
    /// Every recorded answer listed only records its own recording session had written before
    /// it (keys a `POST` or `PUT` of that session answered earlier), and at least two sessions
    /// listed some unfiltered (no query parameter but paging ones): each recording started
    /// from a collection of its own (a store reset per
    /// test, a user of its own). The engine lists the session's own records only (those it
    /// wrote, replayed or was seeded with), never another recording's. False, and not
    /// written, otherwise; a model written before it existed reads as false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_records_only: bool,
    /// Of a list of [`ListShape::own_records_only`]: every recorded answer listed only the
    /// records the requesting principal (its credentials) had written in its session, and at
    /// least one left out a live record another principal of the session had written. The
    /// engine lists, of the records its session created, only those the requesting principal
    /// created. False, and not written, otherwise; a model written before it existed reads as
    /// false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub principal_records_only: bool,
    /// Of a list of [`ListShape::own_records_only`]: values of an equality filter's field
    /// (one of [`ListShape::filters`]) that a request not sending the filter never lists
    /// (`status: archived`): no such recorded answer listed an item holding it, and answers
    /// listing their whole collection left out at least two live records the
    /// requesting principal had written whose last view in their session held it. The engine
    /// leaves such records out unless the request sends the filter. Absent, and not written,
    /// when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_values: Vec<HiddenValue>,
    /// Values of an equality filter (one of [`ListShape::filters`]) that filter nothing
    /// (`state=all`): every recorded answer to a request sending one listed items whose field
    /// held none of it, one listed items of two or more values of the field, and no recorded
    /// item held it. The engine applies no filter for such a value. Absent, and not written,
    /// when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filter_wildcards: Vec<FilterWildcard>,
    /// Query parameter values that order the items by one of their fields (`sort=name`,
    /// `sort=-created_at`), as every recorded answer to such a request listed them. The engine
    /// orders a list it renders from the session's store the same way. Absent, and not
    /// written, when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sorts: Vec<SortOrder>,
    /// Query parameters that search the items' text (`q=admin`): every item a recorded answer
    /// to such a request listed held the value, ignoring letter case, inside one of `fields`,
    /// and a record of the collection holding it in none of them was left out. The engine
    /// keeps, of a list it renders, the items holding the value in one of the fields. Absent,
    /// and not written, when the recordings show none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search_filters: Vec<SearchFilter>,
    /// For a list filtered by its items' primary key (`filters` holds it: `GET
    /// /accounts/relationships?id[]=…`): the item it answers for a requested key no record of
    /// its type holds, where the key names a record of another type (an account no one acted
    /// on has a relationship all the same), see [`UntouchedItem`]. `None` (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untouched_item: Option<UntouchedItem>,
}

/// A list's item for a key nothing acted on ([`ListShape::untouched_item`]): every recorded
/// item of a key no earlier write of its session named held these fields (all but the
/// primary key, which is the requested key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UntouchedItem {
    /// The entity types a requested key must be a record of (the twin's known ids, or the
    /// session's records), sorted: those whose known ids hold every known id of the list's
    /// type (the relationships' keys are accounts' keys).
    pub of: Vec<String>,
    /// The item's other fields.
    pub fields: serde_json::Map<String, Value>,
}

/// One learned [`ListShape::search_filters`] parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchFilter {
    /// The query parameter (`q`).
    pub param: String,
    /// The items' top-level string fields the value was found in, sorted.
    pub fields: Vec<String>,
}

/// One learned [`ListShape::hidden_values`] value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiddenValue {
    /// The equality filter's query parameter, and the item field it compares.
    pub param: String,
    /// The value (a string, or a number's text) the list hides unless the filter is sent.
    pub value: String,
}

/// One learned [`ListShape::filter_wildcards`] value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterWildcard {
    /// The equality filter's query parameter.
    pub param: String,
    /// The value that lists every item whatever its field holds.
    pub value: String,
}

/// One learned [`ListShape::sorts`] order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortOrder {
    /// The query parameter (`sort`).
    pub param: String,
    /// The value it was sent with (`-created_at`); it names `field`.
    pub value: String,
    /// The top-level item field the items were ordered by.
    pub field: String,
    /// Largest first.
    pub descending: bool,
}

/// One learned [`ListShape::set_filters`] relation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetFilter {
    /// The query parameter, as sent (`types[]`).
    pub param: String,
    /// The top-level item field its values are compared with (`type`).
    pub field: String,
    /// The parameter names the values to leave out (`exclude_types[]`), not the ones to keep.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclude: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeField {
    pub pointer: String,
    pub meaning: EnvelopeMeaning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvelopeMeaning {
    /// Total number of matching items.
    Total,
    /// Current page number.
    Page,
    /// Number of pages.
    Pages,
    /// Whether more items follow.
    HasMore,
    /// Items per page.
    PageSize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "style", rename_all = "snake_case")]
pub enum Pagination {
    None,
    /// `?limit=&offset=` (parameter names as recorded).
    LimitOffset {
        limit: String,
        offset: String,
        default_limit: Option<u64>,
    },
    /// `?page=&page_size=` (1-based pages).
    PagePerPage {
        page: String,
        per_page: String,
        default_per_page: Option<u64>,
    },
    /// `?starting_after=<id>` / `ending_before` style cursors over item ids.
    Cursor {
        after: String,
        before: Option<String>,
        limit: Option<String>,
    },
    /// RFC 8288 `Link` headers with `rel="next"`/`"prev"`, built from `max_id`/`min_id`-style
    /// parameters over item ids, or, when `positional`, from an offset into the collection.
    LinkHeader {
        next_param: String,
        prev_param: Option<String>,
        limit: Option<String>,
        /// The links' `next_param` is a position, not an item id: every recorded `next` link
        /// names the request's own value plus the page's item count (`offset=1` after a
        /// one-item first page), none an item of the page. Both links then carry
        /// `next_param` (`prev` one page back). Absent, and not written, when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        positional: bool,
        /// The links' `next_param` is a page number counted from 1: every recorded `next`
        /// link names the request's own page plus one (`page=2` after a request for no page
        /// or for `page=1`), none an item of the page, and at least one tells it apart from a
        /// position (GitHub's `page`/`per_page`). Links carry page numbers (`prev`, `next`,
        /// `last`, `first`). Absent, and not written, when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        numbered: bool,
    },
}

/// One candidate response of a route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// 16 hex chars, a hash of route id + status + guard; stable across re-synth.
    pub id: String,
    pub status: u16,
    pub guard: Guard,
    pub headers: Vec<HeaderProgram>,
    pub body: BodyTemplate,
    pub evidence: Evidence,
    /// The variant's top-level answers are a tagged union (objects of several types, named by
    /// a discriminator key): one template per recorded type, see [`VariantUnion`]. The engine
    /// renders the template of the answer's type in place of `body` (the type the request
    /// sent, else the stored record's, else the most recorded); `wraith check` with
    /// `[diff] split_variants = true` judges an answer under the template of the recording's
    /// type. Absent (and not written) otherwise,
    /// so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub union: Option<VariantUnion>,
    /// The request field that decides which recorded state the variant's answers show (which
    /// optional fields they carry: a create in one region answering a field the other regions
    /// never showed), with the recorded answers of each of its values ([`KeyedSnapshots`]).
    /// The engine renders the variant's observed values, recorded-data lists and optional
    /// fields from the most typical recorded answer of the request's value. Absent (and not
    /// written) when no request field decides a field's presence, so older models read
    /// unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed_snapshots: Option<Box<KeyedSnapshots>>,
    /// The entity type of the record this variant's answers are, where it is not the route's:
    /// a create route answering one kind of request with a record of another type (a post
    /// scheduled for later answers a scheduled post, which later requests read, update and
    /// delete as that type). The engine stores the record a create of this variant makes or
    /// replays as that type. Absent (and not written) when the answers are the route's own
    /// type, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_type: Option<String>,
}

/// See [`Variant::keyed_snapshots`]: the recorded answers of a variant grouped by the value
/// of the request field that decided, in every recorded observation, whether some optional
/// field of the answer was present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyedSnapshots {
    /// The request field (a JSON or form body leaf, or a query parameter; never a path or
    /// header).
    pub field: crate::template::EchoSource,
    /// One bucket per distinct recorded value of the field, ordered by
    /// [`crate::template::key_text`] of the key.
    pub buckets: Vec<SnapshotBucket>,
}

/// One request-key value and the recorded answers to requests carrying it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotBucket {
    /// The request field's value (as recorded: a JSON scalar, or a string for form and query).
    pub key: Value,
    /// The recorded answers (`Moment::source`, `<session id>/<index>`) of the variant's status
    /// and shape to requests with that key, in recorded order.
    pub moments: Vec<String>,
}

impl KeyedSnapshots {
    /// The bucket for a request value of the field, compared by
    /// [`crate::template::key_text`].
    pub fn bucket_for(&self, request_value: &Value) -> Option<&SnapshotBucket> {
        let want = crate::template::key_text(request_value)?;
        self.buckets
            .binary_search_by(|b| {
                crate::template::key_text(&b.key)
                    .as_deref()
                    .unwrap_or("")
                    .cmp(want.as_str())
            })
            .ok()
            .and_then(|i| self.buckets.get(i))
    }
}

/// The per-type templates of a variant whose top-level answers are a tagged union.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantUnion {
    /// The key of the string field naming each answer's type (`type`, `object`, ...).
    pub discriminator: String,
    /// One template per recorded tag value, first seen first: an object holding its tag as a
    /// constant at `discriminator`, anti-unified over that type's answers only
    /// ([`crate::template::ArrayNode::tag_of`] reads its tag).
    pub templates: Vec<crate::template::Node>,
    /// How many recorded answers each template was anti-unified over, in `templates` order:
    /// the engine renders the most recorded type when neither the request nor a stored record
    /// names one. Empty in a model written before it existed (the first template then counts
    /// as the most recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<u64>,
}

/// A predicate over the request (and the namespace) that selects a variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "guard", rename_all = "snake_case")]
pub enum Guard {
    /// Catch-all.
    Always,
    /// Every sub-guard holds.
    All { all: Vec<Guard> },
    /// The entity named by the route's `id_param` (on a list or a create under a parent
    /// record, the parent its last path parameter names) is (or is not) known in this
    /// namespace (recorded non-4xx id, fixture, or created this session, and not deleted this
    /// session).
    StateMember { member: bool },
    /// The record named by the route's `id_param` was (or was not) created in this namespace by
    /// a principal other than the acting one: what an API answers a stranger asking for
    /// another user's record (a 403, or a 404 that hides it). A record the session did not
    /// create, or created as the acting principal, is not foreign.
    ForeignRecord { foreign: bool },
    /// A record of the route's entity type that this namespace holds (created this session,
    /// or a fixture) has (or has not) the request body's value at `pointer` in its own field
    /// of that name: a create refused for a duplicate of a unique field (a 409 for a name
    /// already taken). `pointer` names one top-level body field (`/name`). With
    /// `per_principal`, only records the acting principal created this session count: a name
    /// unique per user, which another user may take too. False (and not written) otherwise,
    /// so older models read unchanged.
    DuplicateValue {
        pointer: String,
        duplicate: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        per_principal: bool,
    },
    /// The request carries (or lacks) this header (lowercase name).
    HeaderPresent { name: String, present: bool },
    /// A body field (JSON pointer into the JSON, form or multipart text body) equals `value`.
    BodyFieldEquals { pointer: String, value: Value },
    /// A body field is a number (a form or multipart value: its text) below `bound`, or,
    /// with `below: false`, above it: what an API answers a value out of its range with (a
    /// 422 for a negative size). `bound` is the nearest value the other statuses were sent.
    BodyFieldBound {
        pointer: String,
        bound: Value,
        below: bool,
    },
    /// A body field is sent with a value that is none of `values` (each compared as
    /// [`Guard::BodyFieldEquals`] compares): what an API answers a value outside the closed
    /// set it accepts with (a 422 for `state: "done"` where `open` and `closed` are
    /// accepted). `values` are the values the other statuses were sent there, sorted.
    BodyFieldNotIn { pointer: String, values: Vec<Value> },
    /// A body field is present (or absent).
    BodyFieldPresent { pointer: String, present: bool },
    /// The request body parses as the content type it claims (JSON object for JSON).
    BodyValid { valid: bool },
    /// A query parameter is present (or absent).
    QueryPresent { name: String, present: bool },
    /// A `multipart/form-data` file part named `part` declares this media type (lowercase,
    /// no parameters): what a server answers by the kind of file it was sent.
    UploadType { part: String, media_type: String },
    /// The record the route names (an action's [`ActionEffect::entity_type`] record at its
    /// `id_param`, else the route's own entity at `id_param`), as the session holds it, has
    /// `value` (a boolean or `null`) at its top-level `field`: an action refused for the
    /// state its record is in (a 403 unsuspending an account that is not suspended). False
    /// when the session knows no such record.
    RecordFieldEquals { field: String, value: Value },
    /// The record the route names (as [`Guard::RecordFieldEquals`] finds it) holds an array
    /// at its top-level `field` that is (or is not) empty: a vote refused on a poll the
    /// session already voted in (`own_votes` not empty). False when the session knows no such
    /// record or the field is not an array.
    RecordFieldEmpty { field: String, empty: bool },
}

impl Guard {
    /// Specificity used to order variants: more predicates = more specific.
    pub fn specificity(&self) -> usize {
        match self {
            Guard::Always => 0,
            Guard::All { all } => all.iter().map(Guard::specificity).sum(),
            _ => 1,
        }
    }
}

/// How one response header is produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderProgram {
    /// Lowercase header name.
    pub name: String,
    pub program: HeaderRule,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum HeaderRule {
    /// Replay these values as recorded.
    Constant { values: Vec<String> },
    /// Recompute from the served body (`content-length`).
    ContentLength,
    /// Freshly produced at serve time: `date` from the namespace clock, request ids from the RNG.
    Volatile { kind: VolatileKind },
    /// A URL built from the served body: its `parts` in order, each a piece of recorded text or
    /// the body's scalar at a pointer as a URL writes it ([`url_token`]). A `Location` naming
    /// the record its answer holds (and the parent it sits under, where the answer names
    /// that), so a record the twin creates is named by its own key, not by the key of the
    /// record recorded. `values` (the recorded ones) are served when the body lacks one of the
    /// scalars.
    BodyValue {
        parts: Vec<UrlPart>,
        values: Vec<String>,
    },
}

/// One piece of a [`HeaderRule::BodyValue`] URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UrlPart {
    /// Recorded text, written as it is.
    Text { text: String },
    /// The served body's scalar at this JSON pointer, as [`url_token`] writes it.
    Body { pointer: String },
}

/// The URL `parts` make of `body`; `None` when the body has no scalar at one of their pointers.
pub fn render_url(parts: &[UrlPart], body: &serde_json::Value) -> Option<String> {
    let mut out = String::new();
    for part in parts {
        match part {
            UrlPart::Text { text } => out.push_str(text),
            UrlPart::Body { pointer } => out.push_str(&url_token(body.pointer(pointer)?)?),
        }
    }
    Some(out)
}

/// Bytes a URL token ([`url_token`]) writes percent-encoded: all but the unreserved
/// characters (RFC 3986 §2.3), `:` and `@`. The token may stand in a path segment or a query
/// value, so every delimiter of either (`/ ? # & = + ;` and the other sub-delimiters) is
/// encoded: no value can end the token, add a parameter or read as a space.
const URL_TOKEN_ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':')
    .remove(b'@');

/// How a [`HeaderRule::BodyValue`] writes a body's scalar into a URL: a non-empty string's
/// text (percent-encoded, [`URL_TOKEN_ESCAPED`], so no value can end the token or the header
/// early) or an integer's digits. `None` for any other value.
pub fn url_token(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) if !s.is_empty() => {
            Some(percent_encoding::utf8_percent_encode(s, URL_TOKEN_ESCAPED).to_string())
        }
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// Characters around a key written in a URL: the separators of its path, query and fragment.
pub const URL_TOKEN_DELIMITERS: &[char] = &['/', '?', '&', '=', '#', ';'];

/// Every scalar of `v` reached through objects alone, as (JSON pointer,
/// [`url_token`]): the values a URL may name a record by.
pub fn url_scalars(v: &serde_json::Value, at: &mut String, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                url_scalars(x, at, out);
                at.truncate(len);
            }
        }
        other => {
            if let Some(t) = url_token(other) {
                out.push((at.clone(), t));
            }
        }
    }
}

/// Field names whose values name things (ids, handles, labels), used to decide whether a path
/// segment value "flows through the API as data".
pub fn is_identifier_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    matches!(
        k.as_str(),
        "id" | "uuid"
            | "name"
            | "label"
            | "username"
            | "slug"
            | "code"
            | "handle"
            | "acct"
            | "region"
            | "address"
            | "range"
            | "tag"
            | "email"
            | "login"
            | "number"
            | "sku"
            | "guid"
    ) || k.ends_with("_id")
        || k.ends_with("_key")
        || k.ends_with("_name")
        || k.ends_with("_slug")
        || key.ends_with("Id")
        || key.ends_with("Name")
}

/// `url` as [`UrlPart`]s of `body`: each whole token of it (between
/// [`URL_TOKEN_DELIMITERS`] or its ends) that is the [`url_token`] of a scalar of `body` reached
/// through objects alone becomes that scalar's pointer, the rest text. Of several scalars a
/// token could be, the one whose key `names_identifier` says names an identifier first, then
/// the shortest pointer, then the first by pointer.
pub fn url_parts(
    url: &str,
    body: &serde_json::Value,
    names_identifier: impl Fn(&str) -> bool,
) -> Vec<UrlPart> {
    let mut scalars = Vec::new();
    url_scalars(body, &mut String::new(), &mut scalars);
    scalars.sort_by(|a, b| {
        let id = |p: &str| names_identifier(p.rsplit('/').next().unwrap_or(""));
        id(&b.0)
            .cmp(&id(&a.0))
            .then(a.0.len().cmp(&b.0.len()))
            .then(a.0.cmp(&b.0))
    });
    let mut parts: Vec<UrlPart> = Vec::new();
    let mut text = String::new();
    let mut start = 0;
    for (end, c) in url
        .char_indices()
        .filter(|(_, c)| URL_TOKEN_DELIMITERS.contains(c))
        .chain(std::iter::once((url.len(), '/')))
    {
        let token = &url[start..end];
        match scalars
            .iter()
            .find(|(_, t)| !token.is_empty() && t == token)
        {
            Some((pointer, _)) => {
                if !text.is_empty() {
                    parts.push(UrlPart::Text {
                        text: std::mem::take(&mut text),
                    });
                }
                parts.push(UrlPart::Body {
                    pointer: pointer.clone(),
                });
            }
            None => text.push_str(token),
        }
        if end < url.len() {
            text.push(c);
        }
        start = end + c.len_utf8();
    }
    if !text.is_empty() {
        parts.push(UrlPart::Text { text });
    }
    parts
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VolatileKind {
    /// HTTP date from the namespace clock.
    Date,
    /// A fresh request id of the recorded shape.
    RequestId,
    /// Dropped: etag, server, rate-limit counters and other per-response noise.
    Drop,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub exchange_count: u64,
    pub confidence_bp: u32,
    /// `<session_id>/<index>` of every exchange folded into the variant (capped at 32).
    pub sources: Vec<String>,
}

/// One concrete recorded request and every recorded answer to it, in recorded order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactEntry {
    pub key: RequestKey,
    /// Every recorded answer to this request, ordered by (session id, exchange index). The
    /// last one is the "last wins" answer.
    pub moments: Vec<Moment>,
    /// Response positions proven session-authored (see [`SessionBoundPath`]); only on
    /// unaddressed reads (literal path, no query, no body). Empty when there is no proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_bound: Vec<SessionBoundPath>,
}

/// Synth's evidence that a response position of an unaddressed read is session-authored: in
/// every recorded observation of the read, the value at `pointer` repeated the value the same
/// recording session had supplied at `field` in the body of an earlier create on `create`. At
/// serve time the engine substitutes the serving session's own value there and claims
/// `session-bound-moment;v=1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionBoundPath {
    /// JSON pointer into the response body.
    pub pointer: String,
    /// `METHOD /template` of the create route whose request supplied the value.
    pub create: String,
    /// JSON pointer into that create's request body.
    pub field: String,
}

/// The identity of a concrete request for exact replay.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestKey {
    /// Concrete path, e.g. `/v1/customers/cus_1`.
    pub path: String,
    /// Query string with parameters sorted by name (stable sort, values kept), `""` when none.
    pub query: String,
    /// Fingerprint of the normalized request body: `b3:` and its hex BLAKE3 digest (bare hex
    /// SHA-256 in models synthesized before; see `request_key::BodyHash` and the normalization
    /// rules in `docs/model-format.md`); `None` when the request had no body.
    pub body: Option<String>,
}

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moment {
    /// `<session_id>/<index>`: the WREC file it came from.
    pub source: String,
    /// Scrubbed credential of the request (the `Authorization` value after scrubbing, or
    /// another credential header or the session cookie: [`crate::principal`]), so the engine
    /// can prefer moments recorded for the same principal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    pub status: u16,
    /// Recorded response headers minus the volatile ones, lowercase, in recorded order.
    pub headers: Vec<(String, String)>,
    pub body: RecordedBody,
    /// The recorded JSON body held values its parsed tree does not keep (a number a double
    /// cannot hold, a key written twice: [`crate::respelling`]), so the body served is not the
    /// recorded moment value for value and is never claimed to be (`X-Wraith-Replay`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub respelled: bool,
}

/// A recorded body. JSON is held as its canonical text ([`JsonText`]), not as a parsed tree:
/// the exact-replay index holds every recorded body, and trees cost about ten times their text.
/// In the file a JSON body is written inline (`{"kind":"json","value":{...}}`).
///
/// `Deserialize` is written by hand: serde's derive for internally tagged enums buffers the
/// whole variant into its own tree first, which is exactly what [`JsonText`] avoids.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RecordedBody {
    Empty,
    Json { value: JsonText },
    Text { text: String },
    Binary { base64: String },
}

impl RecordedBody {
    /// A JSON body from a parsed tree (canonicalized; the tree is dropped).
    pub fn json(value: Value) -> RecordedBody {
        RecordedBody::Json {
            value: JsonText::from_value(value),
        }
    }
}

impl<'de> Deserialize<'de> for RecordedBody {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RecordedBodyVisitor)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RecordedBodyKind {
    Empty,
    Json,
    Text,
    Binary,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum RecordedBodyField {
    Kind,
    Value,
    Text,
    Base64,
    #[serde(other)]
    Other,
}

struct RecordedBodyVisitor;

impl<'de> serde::de::Visitor<'de> for RecordedBodyVisitor {
    type Value = RecordedBody;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a recorded body: {\"kind\": \"empty\"|\"json\"|\"text\"|\"binary\", ...}")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RecordedBody, A::Error> {
        use serde::de::Error as _;
        let mut kind = None;
        let mut value = None;
        let mut text = None;
        let mut base64 = None;
        while let Some(field) = map.next_key::<RecordedBodyField>()? {
            match field {
                RecordedBodyField::Kind => kind = Some(map.next_value::<RecordedBodyKind>()?),
                RecordedBodyField::Value => value = Some(map.next_value::<JsonText>()?),
                RecordedBodyField::Text => text = Some(map.next_value::<String>()?),
                RecordedBodyField::Base64 => base64 = Some(map.next_value::<String>()?),
                RecordedBodyField::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        match kind {
            None => Err(A::Error::missing_field("kind")),
            Some(RecordedBodyKind::Empty) => Ok(RecordedBody::Empty),
            Some(RecordedBodyKind::Json) => Ok(RecordedBody::Json {
                value: value.ok_or_else(|| A::Error::missing_field("value"))?,
            }),
            Some(RecordedBodyKind::Text) => Ok(RecordedBody::Text {
                text: text.ok_or_else(|| A::Error::missing_field("text"))?,
            }),
            Some(RecordedBodyKind::Binary) => Ok(RecordedBody::Binary {
                base64: base64.ok_or_else(|| A::Error::missing_field("base64"))?,
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LatencyProfile {
    pub p50_ms: u64,
    pub p90_ms: u64,
    pub p99_ms: u64,
    pub sample_count: u64,
}

/// A route-derived entity type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityType {
    /// Primary-key field of its records (`id` unless the recordings show otherwise).
    pub primary_key: String,
    /// Learned shape of its ids, used to mint ids for creates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_shape: Option<IdShape>,
    /// Ids seen with any non-4xx outcome.
    pub known_ids: BTreeSet<String>,
    /// Ids whose only recorded outcome was a 4xx.
    pub known_missing: BTreeSet<String>,
    /// Latest recorded representation of each known entity (from reads, creates, updates and
    /// list items), by id: what a read of a known id serves when exact replay does not apply,
    /// and what list routes merge session writes into.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub records: BTreeMap<String, Value>,
    /// Top-level string fields a create answers whole and every later view of the same record
    /// (read, update answer, list item) shows only the first `n` characters of, as APIs show a
    /// secret once: field name → `n`. The engine answers the create whole and keeps the first
    /// `n` characters in the stored record, so later reads, updates and lists show them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub read_prefixes: BTreeMap<String, u64>,
    /// Its keys are counted within each parent record, not across the type (an issue's
    /// `number`, from 1 in every repository): a recorded session created two records of the
    /// type with one key under different parents. A record is then named by its key together
    /// with its parents' keys, as the check's id flow reads it. False (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keyed_per_parent: bool,
    /// A field counted within each parent (a create's `parent_sequences`) that held the
    /// path's id in every recorded read and update answer, as the primary key did (an issue's
    /// `number` beside an `id` equal to it): a path value the session holds no record under
    /// names the record of the same parents whose field holds it. `None` (and not written)
    /// otherwise, so older models read unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternate_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `warning` or `info`.
    pub severity: String,
    /// Stable machine code, e.g. `unparseable-body`, `mixed-body-kinds`, `single-observation`.
    pub code: String,
    /// The route concerned, when there is one, named as check reports name it
    /// ([`route_label`]: `METHOD /path`, with ` on <origin>` for another origin's route).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    pub message: String,
}

/// `model/symbols.json`: named dynamic values and where they first appeared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SymbolTable {
    pub schema_version: u32,
    /// By symbol name (`$id_3`).
    pub symbols: BTreeMap<String, Symbol>,
    /// [`model_digest`](crate::model_digest) of the `twin.wir.json` written beside this table,
    /// so a pair that no synth wrote together (one stopped between its two renames, or a model
    /// edited by hand) is told apart. Absent in tables written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_digest: Option<String>,
}

/// The digest a [`SymbolTable`] records of the model file written beside it: `sha256:` and the
/// lowercase hex SHA-256 of the file's bytes.
pub fn model_digest(model_file: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!(
        "sha256:{}",
        crate::request_key::hex(&Sha256::digest(model_file))
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// `PrefixedId`, `Integer`, `Uuid`, `String`.
    pub symbol_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_pattern: Option<String>,
    /// `<session_id>/<index>` where it first appeared.
    pub first_seen_exchange: String,
    /// Where in that exchange: `$.response.body/id`, `$.request.path[2]`.
    pub first_seen_path: String,
    /// How many exchanges mention it.
    pub occurrences: u64,
}

impl Model {
    /// The names ([`Route::label`]) of the routes with a non-empty `drift`, sorted: a path
    /// recorded on two hosts is two routes, and two names.
    pub fn drifted_route_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .routes
            .iter()
            .filter(|r| !r.drift.is_empty())
            .map(Route::label)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The rule by which a create of a segment member's record type names the members of that
    /// array by value (an issue's create naming its `labels`): the members are that rule's
    /// records. `None` when no create does.
    pub fn members_named_by_value(&self, member: &SegmentMember) -> Option<&RecordsByValue> {
        let at = format!("/{}", crate::pointer::escape_token(&member.field));
        self.routes
            .iter()
            .filter(|r| r.entity_type.as_deref() == Some(member.entity_type.as_str()))
            .flat_map(|r| &r.records_by_value)
            .find(|rule| rule.at == at && rule.by == member.key)
    }

    /// `METHOD /path` of every route, for route-miss bodies and coverage.
    pub fn route_names(&self) -> Vec<String> {
        self.routes
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_url_names_the_body_scalars_that_are_its_whole_tokens() {
        let text = |t: &str| UrlPart::Text { text: t.into() };
        let body = |p: &str| UrlPart::Body { pointer: p.into() };
        let id = |k: &str| is_identifier_key(k);
        let created = json!({"id": "t_1", "project_id": "p_9", "count": 1, "v": "v1"});
        assert_eq!(
            url_parts("https://h/v1/projects/p_9/tasks/t_1?page=1", &created, id),
            vec![
                text("https://h/"),
                body("/v"),
                text("/projects/"),
                body("/project_id"),
                text("/tasks/"),
                body("/id"),
                text("?page="),
                body("/count"),
            ]
        );
        assert_eq!(
            url_parts("/v1/jobs", &json!({"n": 1}), id),
            vec![text("/v1/jobs")]
        );
        // An identifier's key first, then the shorter pointer.
        assert_eq!(
            url_parts("/w/7", &json!({"count": 7, "a": {"id": 7}, "id": 7}), id),
            vec![text("/w/"), body("/id")]
        );
        let parts = url_parts("/v1/projects/p_9/tasks/t_1", &created, id);
        assert_eq!(
            render_url(
                &parts,
                &json!({"id": "t 2", "project_id": "p_8", "v": "v1"})
            ),
            Some("/v1/projects/p_8/tasks/t%202".to_string())
        );
        assert_eq!(render_url(&parts, &json!({"id": "t_2"})), None);
    }

    #[test]
    fn a_body_scalar_is_written_into_a_url_as_one_encoded_segment() {
        use serde_json::json;
        assert_eq!(url_token(&json!("a b/c")).as_deref(), Some("a%20b%2Fc"));
        assert_eq!(url_token(&json!("w_1:x@y")).as_deref(), Some("w_1:x@y"));
        // In a query value as in a path segment: no parameter added, no `+` read as a space.
        assert_eq!(
            url_token(&json!("a&admin=1")).as_deref(),
            Some("a%26admin%3D1")
        );
        assert_eq!(
            url_token(&json!("a+b;c,d")).as_deref(),
            Some("a%2Bb%3Bc%2Cd")
        );
        assert_eq!(url_token(&json!(42)).as_deref(), Some("42"));
        assert_eq!(url_token(&json!(1.5)), None);
        assert_eq!(url_token(&json!("")), None);
        assert_eq!(url_token(&json!(true)), None);
        let mut found = Vec::new();
        url_scalars(
            &json!({"id": 3, "a/b": {"k": "v"}, "items": [{"id": 9}], "on": true}),
            &mut String::new(),
            &mut found,
        );
        found.sort();
        assert_eq!(
            found,
            vec![
                ("/a~1b/k".to_string(), "v".to_string()),
                ("/id".to_string(), "3".to_string())
            ]
        );
    }

    /// A path recorded on two hosts is two routes: each drifted one is named on its own, as the
    /// check report and `wraith coverage` name it, so `serve`'s `drifted_routes` lists both and
    /// the check's drift share counts both.
    #[test]
    fn drifted_route_names_name_a_route_of_another_host_with_its_origin() {
        let drift = vec![RouteDrift {
            kind: DriftKind::FieldRemoved,
            at: "/name".into(),
            earlier: None,
            newer: None,
            earlier_answers: 2,
            newer_answers: 1,
            since: "2026-01-02T00:00:00Z".into(),
        }];
        let route = |origin: Option<&str>, drift: &[RouteDrift]| Route {
            method: "GET".into(),
            path: "/v1/nodes".into(),
            origin: origin.map(str::to_string),
            drift: drift.to_vec(),
            ..Route::default()
        };
        let model = Model {
            schema_version: crate::MODEL_SCHEMA_VERSION,
            tool_version: "test".into(),
            twin: "t".into(),
            base_url: "https://api.example.com".into(),
            recorded_at: None,
            sessions: Vec::new(),
            routes: vec![
                route(None, &drift),
                route(Some("https://east.example.com"), &drift),
                route(Some("https://west.example.com"), &[]),
            ],
            entity_types: Default::default(),
            diagnostics: Vec::new(),
            precomputed: None,
        };
        assert_eq!(
            model.drifted_route_names(),
            ["GET /v1/nodes", "GET /v1/nodes on https://east.example.com"]
        );
    }

    fn moment_with(body: RecordedBody) -> Moment {
        Moment {
            source: "s1/1".to_string(),
            principal: None,
            respelled: false,
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    #[test]
    fn a_json_body_is_written_inline_and_read_back_as_the_same_text() {
        let m = moment_with(RecordedBody::json(
            json!({"z": [1, "a b"], "a": {"y": null, "x": 1.5}}),
        ));
        let text = crate::to_canonical_json(&m).unwrap_or_default();
        assert_eq!(
            text,
            "{\"body\":{\"kind\":\"json\",\"value\":{\"a\":{\"x\":1.5,\"y\":null},\"z\":[1,\"a b\"]}},\
             \"headers\":[],\"source\":\"s1/1\",\"status\":200}\n"
        );
        let back: Moment = crate::from_json_str(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, m);
        assert_eq!(crate::to_canonical_json(&back).ok(), Some(text));
    }

    #[test]
    fn every_body_kind_round_trips_whatever_the_field_order() {
        for (text, want) in [
            (r#"{"kind":"empty"}"#, RecordedBody::Empty),
            (
                r#"{"value":[1,{"a":2}],"kind":"json"}"#,
                RecordedBody::json(json!([1, {"a": 2}])),
            ),
            (
                r#"{"kind":"text","text":"hi"}"#,
                RecordedBody::Text { text: "hi".into() },
            ),
            (
                r#"{"base64":"AAE=","kind":"binary","extra":{"ignored":true}}"#,
                RecordedBody::Binary {
                    base64: "AAE=".into(),
                },
            ),
        ] {
            let got: RecordedBody = crate::from_json_str(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn a_body_without_its_kind_or_payload_is_an_error_naming_the_field() {
        let err =
            crate::from_json_str::<RecordedBody>(r#"{"value":1}"#).expect_err("must be refused");
        assert!(err.to_string().contains("kind"), "{err}");
        let err = crate::from_json_str::<RecordedBody>(r#"{"kind":"json"}"#)
            .expect_err("must be refused");
        assert!(err.to_string().contains("value"), "{err}");
        let err =
            crate::from_json_str::<RecordedBody>(r#"{"kind":"xml"}"#).expect_err("must be refused");
        assert!(err.to_string().contains("xml"), "{err}");
    }

    #[test]
    fn a_bad_body_inside_a_model_reports_its_path() {
        let text = r#"[{"body":{"kind":"json"},"headers":[],"source":"s","status":200}]"#;
        let err = crate::from_json_str::<Vec<Moment>>(text).expect_err("must be refused");
        assert!(err.to_string().contains("[0].body"), "{err}");
    }

    #[test]
    fn hash_tokens_are_the_names_after_a_free_standing_hash() {
        assert_eq!(
            super::hash_tokens("#Rust and #rust_lang, a#b ## #, http://x/#frag (#tag)! #émoji"),
            vec!["Rust", "rust_lang", "tag", "émoji"]
        );
    }

    #[test]
    fn text_tags_render_each_distinct_name_once_in_text_order() {
        let rule = TextTags {
            at: "/tags".into(),
            text_field: "/status".into(),
            key: "name".into(),
            lowercase: true,
            fields: vec![
                TagField {
                    name: "name".into(),
                    value: TagValue::Name,
                },
                TagField {
                    name: "url".into(),
                    value: TagValue::Affixed {
                        prefix: "http://h/tags/".into(),
                        suffix: String::new(),
                    },
                },
            ],
        };
        assert_eq!(
            serde_json::Value::Array(rule.items("#Foo then #bar and #FOO")),
            serde_json::json!([
                {"name": "foo", "url": "http://h/tags/foo"},
                {"name": "bar", "url": "http://h/tags/bar"}
            ])
        );
    }

    fn paragraph_rule() -> TextRendering {
        TextRendering {
            at: "/content".into(),
            text_field: "/status".into(),
            prefix: "<p>".into(),
            suffix: "</p>".into(),
            escapes: [("'".to_string(), "&#39;".to_string())]
                .into_iter()
                .collect(),
            tokens: vec![TokenRendering {
                sigil: "#".into(),
                parts: vec!["<a href=\"/tags/".into(), "\">#".into(), "</a>".into()],
            }],
        }
    }

    #[test]
    fn text_rendering_wraps_escapes_and_links_tokens() {
        let rule = paragraph_rule();
        assert_eq!(
            rule.render("it's #rust"),
            r#"<p>it&#39;s <a href="/tags/rust">#rust</a></p>"#
        );
        assert_eq!(rule.render(""), "<p></p>");
    }

    #[test]
    fn text_rendering_keeps_sigils_that_start_no_token() {
        let rule = paragraph_rule();
        // After a word character, after `/` or after the same sigil, or with no word after it.
        assert_eq!(rule.render("a#b x/#y ##z # !"), "<p>a#b x/#y ##z # !</p>");
        // A sigil without a rule is a character like any other.
        assert_eq!(rule.render("@me"), "<p>@me</p>");
    }

    #[test]
    fn text_units_split_tokens_at_the_first_non_word_character() {
        let units = text_units("#a_1-b @c", |c| c == '#' || c == '@');
        assert_eq!(
            units,
            vec![
                TextUnit::Token {
                    sigil: '#',
                    word: "a_1"
                },
                TextUnit::Char('-'),
                TextUnit::Char('b'),
                TextUnit::Char(' '),
                TextUnit::Token {
                    sigil: '@',
                    word: "c"
                },
            ]
        );
    }
}
