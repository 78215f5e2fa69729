use acp_core::harness::*;
use acp_core::*;
use std::time::Duration;
fn main() {
    let path = VirtualPath { service: Duration::from_millis(1), forward_delay: Duration::from_millis(5), reverse_delay: Duration::from_millis(5), queue_limit: 10000 };
    let cfg = HarnessConfig { path: path.clone(), duration: Duration::from_secs(30), warmup: Duration::from_secs(20), source: SourceConfig::default(), payload: 64, outages: vec![] };
    let a = run(Box::new(Acp::plus()), &cfg);
    println!("{:?}", a.age);
}
