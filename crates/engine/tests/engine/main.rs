//! The engine's in-process tests, one module per behaviour, gathered in one test binary so the
//! workspace links one executable here instead of one per file. Every module drives the
//! sans-IO engine through its public API, request in and response out.

mod support;

mod action_effects;
mod action_values;
mod actor_view;
mod array_echo;
mod client_set_fields;
mod contract;
mod counterpart_references;
mod counterpart_requests;
mod create_counters;
mod deleted_counterparts;
mod echo_default;
mod embedded_counterpart_names;
mod enveloped_creates;
mod fixtures;
mod grouped_ids;
mod handler_probe;
mod hostile_requests;
mod keyed_list_items;
mod keyed_snapshots;
mod masked_fields;
mod member_effects;
mod member_items;
mod membership;
mod minted_keys;
mod null_echo;
mod origins;
mod outbound_policy;
mod outbound_replay;
mod pagination;
mod path_filter;
mod raw_moments;
mod read_prefixes;
mod replay_cache;
mod replay_identity;
mod request_keying;
mod retried_writes;
mod sessions;
mod settled_reads;
mod shared_list_records;
mod sim_layers;
mod singleton;
mod snapshot_values;
mod state;
mod text_mentions;
mod text_rendering;
mod text_tags;
mod time_axis;
mod unsent_writes;
mod variant_unions;
mod viewer_fields;
mod wrapped_creates;
mod write_history;
