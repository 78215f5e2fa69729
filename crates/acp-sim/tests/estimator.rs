//! The estimators of issue 22 item 3 trained on a small simulator data set (seconds): they beat
//! trivial baselines on held-out traces, and their model file round-trips and refuses bad input
//! with a clear error.

use acp_sim::estimator::model::{ModelFile, FORMAT};
use acp_sim::estimator::train::{train, TrainConfig, TrainReport};

/// Three send rates of 6000 packets each way; an SVM on 400 samples for m = 20; bottleneck
/// traces of 10,000 packets at 200 and 500 Mbit/s (samples come from the second half, after
/// a gigabit backhaul's queue has filled). Fixed seed: the outcome is deterministic, the margins below
/// are what the thresholds must leave room for across model changes, not sampling noise.
fn small() -> TrainConfig {
    TrainConfig {
        rates_mbps: vec![100.0, 300.0, 500.0],
        packets: 6_000,
        sweep: vec![20],
        svm_samples: 400,
        svm_test_samples: 4_000,
        bottleneck_rates_mbps: vec![200.0, 500.0],
        bottleneck_packets: 10_000,
        level_secs: 1.0,
        n_sweep: vec![1, 5],
        p_sweep: vec![10, 100],
        seed: 11,
        ..TrainConfig::default()
    }
}

fn trained() -> &'static (ModelFile, TrainReport) {
    static CELL: std::sync::OnceLock<(ModelFile, TrainReport)> = std::sync::OnceLock::new();
    CELL.get_or_init(|| train(&small()).expect("training"))
}

/// The thesis's m = 20 with σ on held-out traces, against the trivial answer "every packet
/// starts a frame" (F1 = 2q/(1 + q) for a share q of frame starts): at least 0.2 better; no
/// worse than the thesis's own baseline, a learned threshold on the last inter-arrival time
/// (Fig. 4.12(b)), by more than 0.01; the estimated mean level within 25 % of the
/// MAC-timestamp level up to 300 Mbit/s (above, the timestamp noise makes the estimator
/// overestimate, as the thesis's does, Fig. 4.12(c)); the SVM at least 0.2 above the trivial
/// answer too.
#[test]
fn the_boundary_estimator_beats_trivial_answers_on_held_out_traces() {
    let (_, r) = trained();
    eprintln!("{r:#?}");
    let q = r.per_rate.iter().map(|row| 1.0 / row.level).sum::<f64>() / r.per_rate.len() as f64;
    let trivial = 2.0 * q / (1.0 + q);
    assert!(r.f1 >= trivial + 0.2, "F1 {} against {trivial}", r.f1);
    assert!(
        r.f1 >= r.f1_threshold - 0.01,
        "F1 {} against {}",
        r.f1,
        r.f1_threshold
    );
    for row in r.per_rate.iter().filter(|row| row.rate_mbps <= 300.0) {
        let err = (row.level_model - row.level).abs() / row.level;
        assert!(err < 0.25, "{row:?}");
    }
    let svm = r.f1_vs_m[0].svm_sigma.expect("an SVM was trained");
    assert!(svm >= trivial + 0.2, "SVM F1 {svm} against {trivial}");
}

/// Accuracy above 90 % (the thesis's Figs. 4.17–4.19) and at least 0.3 above always answering
/// the larger class.
#[test]
fn the_bottleneck_classifier_is_right_nine_times_in_ten() {
    let (_, r) = trained();
    let accuracy = r.bottleneck.accuracy();
    assert!(accuracy > 0.9, "{accuracy}: {:?}", r.scenarios);
    assert!(accuracy >= r.bottleneck_baseline_accuracy + 0.3);
}

/// §4.4.2: the SVM regression on the logistic estimator's slot means corrects its overestimate
/// where the timestamp noise is heavy (500 Mbit/s here; the thesis: RMSE from ≈ 40 down to at
/// most 8 packets at 500–600 Mbit/s). Asserted: below the logistic estimator's RMSE there, and
/// within 3 packets of the MAC level's spread wherever the logistic estimator is already good
/// (at most 2 packets off), so the correction does not cost accuracy at low load.
#[test]
fn the_level_svm_corrects_the_logistic_estimator_at_high_load() {
    let (_, r) = trained();
    let high = r
        .level_svm
        .iter()
        .find(|row| row.rate_mbps == 500.0)
        .unwrap();
    assert!(high.slots >= 5, "{high:?}");
    assert!(high.rmse_svm < high.rmse_logistic, "{:?}", r.level_svm);
    for row in r.level_svm.iter().filter(|row| row.rmse_logistic <= 2.0) {
        assert!(row.rmse_svm < 3.0, "{:?}", r.level_svm);
    }
}

/// Fig. 4.17: F1 above 90 % for every n and p ≥ 100 (the thesis: above 90 % for all its n and
/// p, best at p = 100–200); with p = 10 the loss fraction moves in steps of a tenth and is not
/// asserted.
#[test]
fn the_bottleneck_classifier_holds_across_n_and_p() {
    let (_, r) = trained();
    assert_eq!(r.np_sweep.len(), 4);
    for row in r.np_sweep.iter().filter(|row| row.p >= 100) {
        assert!(row.f1 > 0.9, "{:?}", r.np_sweep);
    }
}

#[test]
fn the_model_file_round_trips() {
    let (model, _) = trained();
    let dir = acp_testkit::Scratch::new("aggest-model");
    let path = dir.join("model.json");
    model.save(&path).unwrap();
    let back = ModelFile::load(&path).unwrap();
    // The gap cap is the training set's 99th percentile gap: at 100 Mbit/s a 1500-byte packet
    // leaves every 120 µs and frames of two lie ≈ 240 µs apart, so hundreds of µs (359 µs for
    // the default set, docs/AGGREGATION.md); the band fails a missing or runaway cap.
    let cap = model.boundary.gap_cap_us.unwrap();
    assert!((120.0..2000.0).contains(&cap), "{cap} µs");
    // serde_json parses floats to within an ulp (its exact `float_roundtrip` is not enabled
    // in the workspace), so numbers are compared to 1e-12 relative, everything else exactly.
    same(
        &serde_json::to_value(&back).unwrap(),
        &serde_json::to_value(model).unwrap(),
    );
}

fn same(a: &serde_json::Value, b: &serde_json::Value) {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{x} against {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).for_each(|(x, y)| same(x, y));
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
            x.values().zip(y.values()).for_each(|(x, y)| same(x, y));
        }
        _ => assert_eq!(a, b),
    }
}

#[test]
fn bad_model_files_are_refused_with_a_reason() {
    let (model, _) = trained();
    let dir = acp_testkit::Scratch::new("aggest-bad");
    let path = dir.join("model.json");
    let good = serde_json::to_value(model).unwrap();
    let mut cases: Vec<(String, &str)> = vec![
        ("not json".into(), "is not an estimator file"),
        ("{}".into(), "is not an estimator file"),
    ];
    let mut edit = |f: &dyn Fn(&mut serde_json::Value), why: &'static str| {
        let mut v = good.clone();
        f(&mut v);
        cases.push((v.to_string(), why));
    };
    edit(
        &|v| v["format"] = "other".into(),
        "expected \"acp-aggregation-estimator\"",
    );
    edit(&|v| v["version"] = 2.into(), "version 2");
    edit(
        &|v| {
            v["boundary"]["logistic"]["weights"]
                .as_array_mut()
                .unwrap()
                .pop();
        },
        "boundary.logistic.weights has 20 numbers, the features need 21",
    );
    edit(
        &|v| v["bottleneck"]["logistic"]["scale"][0] = (-1.0).into(),
        "scale must be positive",
    );
    edit(&|v| v["boundary"]["m"] = 0.into(), "at least 1");
    edit(
        &|v| v["boundary"]["gap_cap_us"] = 0.0.into(),
        "boundary.gap_cap_us must be a positive number",
    );
    for (text, why) in &cases {
        std::fs::write(&path, text).unwrap();
        let err = ModelFile::load(&path).unwrap_err();
        assert!(err.contains(why), "{err:?} should say {why:?}");
        assert!(err.contains("model.json"), "{err:?} names the file");
    }
    let missing = ModelFile::load(&dir.join("absent.json")).unwrap_err();
    assert!(missing.contains("cannot read model"), "{missing}");
    assert_eq!(FORMAT, good["format"]);
}
