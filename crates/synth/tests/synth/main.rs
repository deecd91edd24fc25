//! Synthesis tests, one module per behaviour, gathered in one test binary so the workspace
//! links one executable here instead of one per file. Every module runs the public synth API on
//! recordings written in code or read from the shared corpora.

mod common;

mod action_values;
mod blamed_fields;
mod bound_guards;
mod carried_fields;
mod child_refs;
mod closed_set_guards;
mod corpora;
mod create_counters;
mod determinism;
mod drift;
mod duplicate_values;
mod embedded_lists;
mod embedded_records;
mod encoded_bodies;
mod enveloped_boolean_echo;
mod implicit_children;
mod keyed_snapshots;
mod link_positions;
mod list_filter_wildcards;
mod list_hidden_values;
mod list_item_record_classes;
mod list_items_of_one;
mod list_lower_bounds;
mod list_own_records;
mod list_parent_member;
mod list_set_filters;
mod list_sorts;
mod mirrored_lists;
mod parent_keys;
mod path_filter;
mod path_memberships;
mod qualified_keys;
mod qualified_paths;
mod read_prefixes;
mod read_progressions;
mod refusal_reads;
mod request_keying;
mod robustness;
mod rules;
mod segment_members;
mod sent_expansions;
mod state_effects;
mod strangers_and_cascades;
mod text_rendering;
mod text_tags;
mod threads;
mod update_keeps;
mod update_resets;
mod upload_names;
mod upload_types;
mod viewer_fields;
mod wrapped_creates;
