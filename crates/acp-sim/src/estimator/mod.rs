//! Estimators of issue 22 item 3, trained on simulator data (aggregation thesis §4.4–4.5): the
//! frame-boundary estimator that recovers A-MPDU aggregation levels from a station's kernel
//! receive timestamps, and the classifier that tells whether the WLAN or the wired backhaul is
//! a path's bottleneck.
//!
//! - [`trace`]: labelled receive traces from the 802.11ac downlink model;
//! - [`napi`]: kernel-timestamp noise (NAPI interrupt mitigation);
//! - [`features`]: the thesis's feature vectors (4.3) and (4.6);
//! - [`train`]: data generation, fitting with linfa, held-out metrics;
//! - [`level_svm`]: §4.4.2's SVM regression of slot levels on the logistic estimator's output;
//! - [`model`]: the model file and the online level estimator `acp monitor` runs;
//! - [`slots`]: that estimator's per-slot reports, as a monitor puts them on its ACKs.

pub mod features;
pub mod level_svm;
pub mod model;
pub mod napi;
pub mod slots;
pub mod trace;
pub mod train;
