//! Integration tests: the `lakestar` binary driven on real lakes (`../shared/lakes`) and
//! generated ones. One test binary, a module per area.

mod common;

mod bad_input;
mod cli_ux;
mod collections;
mod companion;
mod containment;

mod agent;
mod agent_loop;
mod agent_small_model;
mod answer_contract;
mod ask_interrupt;
mod ask_progress;
mod ask_surfaces;
mod crash;
mod dabench;
mod dabstep;
mod datasets;
mod describe;
mod devset;
mod doctor;
mod escape;
mod fit;
mod fixtures;
mod follow;
mod formats;
mod head;
mod honest_figures;
mod incremental;
mod index_dir;
mod llm;
mod llm_analyzer;
mod llm_server;
mod load_lines;
mod mcp;
mod messy;
mod messytables;
mod models;
mod object_store;
mod object_store_surfaces;
mod reference_docs;
mod sandbox;
mod sandbox_answers;
mod search;
mod search_shares;
mod search_ux;
mod serve;
mod shared_lakes;
mod sheet_regions;
mod table_loads;
mod vectors;
mod watch;
mod web_ui;
mod words_embedder;
