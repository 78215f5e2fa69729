//! How the MQTT sink reaches its broker: the options of `acp monitor` that say so (`--mqtt-*`),
//! TLS for `mqtts://` (the system's trust store, or `--mqtt-ca`; a client certificate with
//! `--mqtt-cert`/`--mqtt-key`) and a user name with a password read from a file or an environment
//! variable.
//!
//! Everything is read and checked when the monitor starts, so a missing file, a PEM file without a
//! certificate or key, or an unset variable is a one-line usage error (exit 2) rather than a
//! connection that keeps failing. The password is never part of a message: errors name the file or
//! the variable, `--check-config` prints the same (the option's value is the file or the
//! variable, never the secret), and [`Password`]'s `Debug` is redacted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rumqttc::{QoS, TlsConfiguration, Transport};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use super::mqtt::Broker;

/// The `--mqtt-*` options of `acp monitor`.
#[derive(Debug, Clone, clap::Args)]
pub struct MqttArgs {
    /// MQTT quality of service for --publish mqtt:// and mqtts://: 0 (at most once) or 1 (at
    /// least once).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=1))]
    pub mqtt_qos: u8,
    /// For mqtts:// brokers: trust only the CA certificates in this PEM file (e.g. a private CA)
    /// instead of the system's trust store.
    #[arg(long, value_name = "FILE")]
    pub mqtt_ca: Option<PathBuf>,
    /// For mqtts:// brokers: authenticate with the client certificate (chain) in this PEM file;
    /// needs --mqtt-key.
    #[arg(long, value_name = "FILE", requires = "mqtt_key")]
    pub mqtt_cert: Option<PathBuf>,
    /// The private key of --mqtt-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "mqtt_cert")]
    pub mqtt_key: Option<PathBuf>,
    /// User name to log in to the MQTT broker with; the password comes from
    /// --mqtt-password-file or --mqtt-password-env (never from the command line).
    #[arg(long, value_name = "NAME")]
    pub mqtt_username: Option<String>,
    /// File whose first line is the MQTT password (e.g. a systemd credential).
    #[arg(long, value_name = "FILE", requires = "mqtt_username")]
    pub mqtt_password_file: Option<PathBuf>,
    /// Environment variable holding the MQTT password.
    #[arg(
        long,
        value_name = "VAR",
        requires = "mqtt_username",
        conflicts_with = "mqtt_password_file"
    )]
    pub mqtt_password_env: Option<String>,
}

/// A password, kept out of `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(…)")
    }
}

/// What a connection to one broker needs, read and checked.
#[derive(Debug, Clone)]
pub struct Connect {
    /// The QoS of publications.
    pub qos: QoS,
    /// The TLS client configuration (`mqtts://` only).
    pub tls: Option<Arc<ClientConfig>>,
    /// User name and password.
    pub login: Option<(String, Password)>,
}

impl Connect {
    /// The transport for `rumqttc`.
    pub fn transport(&self) -> Transport {
        match &self.tls {
            Some(config) => Transport::tls_with_config(TlsConfiguration::Rustls(config.clone())),
            None => Transport::tcp(),
        }
    }

    /// The user name and password for `rumqttc`.
    pub fn credentials(&self) -> Option<(String, String)> {
        self.login
            .as_ref()
            .map(|(user, password)| (user.clone(), password.0.clone()))
    }
}

impl MqttArgs {
    /// Reads the files and the variable the options name and checks them against the brokers
    /// of `--publish` (`brokers`); the error is one line naming the option.
    pub fn connect(&self, brokers: &[&Broker]) -> Result<Option<Connect>, String> {
        let tls_options = [
            ("--mqtt-ca", self.mqtt_ca.is_some()),
            ("--mqtt-cert", self.mqtt_cert.is_some()),
        ];
        if brokers.is_empty() {
            let given = tls_options
                .into_iter()
                .chain([("--mqtt-username", self.mqtt_username.is_some())])
                .find(|(_, set)| *set);
            return match given {
                Some((name, _)) => Err(format!("{name} needs --publish mqtt:// or mqtts://")),
                None => Ok(None),
            };
        }
        let any_tls = brokers.iter().any(|b| b.tls);
        if let Some((name, _)) = tls_options.iter().find(|(_, set)| *set && !any_tls) {
            return Err(format!("{name} applies to mqtts:// brokers only"));
        }
        let tls = any_tls.then(|| self.tls_config()).transpose()?;
        let login = match &self.mqtt_username {
            None => None,
            Some(user) => Some((user.clone(), self.password()?)),
        };
        Ok(Some(Connect {
            qos: if self.mqtt_qos == 0 {
                QoS::AtMostOnce
            } else {
                QoS::AtLeastOnce
            },
            tls,
            login,
        }))
    }

    fn password(&self) -> Result<Password, String> {
        if let Some(file) = &self.mqtt_password_file {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("--mqtt-password-file {}: {e}", file.display()))?;
            let line = text.lines().next().unwrap_or("");
            if line.is_empty() {
                return Err(format!(
                    "--mqtt-password-file {}: the first line is empty",
                    file.display()
                ));
            }
            return Ok(Password(line.to_string()));
        }
        if let Some(var) = &self.mqtt_password_env {
            return match std::env::var(var) {
                Ok(p) if !p.is_empty() => Ok(Password(p)),
                Ok(_) => Err(format!("--mqtt-password-env {var}: the variable is empty")),
                Err(_) => Err(format!(
                    "--mqtt-password-env {var}: the variable is not set (or not UTF-8)"
                )),
            };
        }
        Err("--mqtt-username needs --mqtt-password-file or --mqtt-password-env".into())
    }

    /// The TLS client configuration: ring's cipher suites, TLS 1.2 and 1.3, the roots of
    /// `--mqtt-ca` or else the system's, and the client certificate if given.
    fn tls_config(&self) -> Result<Arc<ClientConfig>, String> {
        let mut roots = RootCertStore::empty();
        match &self.mqtt_ca {
            Some(file) => {
                let (added, _) = roots.add_parsable_certificates(certificates("--mqtt-ca", file)?);
                if added == 0 {
                    return Err(format!(
                        "--mqtt-ca {}: no usable CA certificate",
                        file.display()
                    ));
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err("mqtts://: the system has no trusted root certificates \
                                (install ca-certificates, or give --mqtt-ca FILE)"
                        .into());
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("mqtts://: {e}"))?
            .with_root_certificates(roots);
        let config = match (&self.mqtt_cert, &self.mqtt_key) {
            (Some(cert), Some(key_file)) => {
                let chain = certificates("--mqtt-cert", cert)?;
                let key = PrivateKeyDer::from_pem_file(key_file)
                    .map_err(|e| format!("--mqtt-key {}: {e}", key_file.display()))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("--mqtt-cert/--mqtt-key: {e}"))?
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }
}

/// The certificates of a PEM file; an error names `option` and the file.
fn certificates(option: &str, file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = file.display();
    let certs = CertificateDer::pem_file_iter(file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{option} {shown}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("{option} {shown}: no PEM certificate in it"));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        mqtt: MqttArgs,
    }

    fn args(line: &[&str]) -> MqttArgs {
        let mut all = vec!["acp"];
        all.extend_from_slice(line);
        Cli::try_parse_from(all).unwrap().mqtt
    }

    fn broker(url: &str) -> Broker {
        match super::super::parse_target(url) {
            Ok(super::super::Target::Mqtt(b)) => b,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn passwords_come_from_a_file_or_the_environment_and_never_show() {
        let dir = acp_testkit::Scratch::new("acp-mqtt-connect");
        let file = dir.join("password");
        std::fs::write(&file, "s3cret-from-file\nignored\n").unwrap();
        let plain = broker("mqtt://127.0.0.1/acp");
        let a = args(&[
            "--mqtt-username",
            "acp",
            "--mqtt-password-file",
            file.to_str().unwrap(),
        ]);
        let c = a.connect(&[&plain]).unwrap().unwrap();
        assert_eq!(
            c.credentials(),
            Some(("acp".into(), "s3cret-from-file".into()))
        );
        assert!(!format!("{:?}", c.login).contains("s3cret"));
        // A variable this test process sets for itself (no other test reads it).
        std::env::set_var("ACP_TEST_MQTT_PASSWORD", "s3cret-from-env");
        let a = args(&[
            "--mqtt-username",
            "acp",
            "--mqtt-password-env",
            "ACP_TEST_MQTT_PASSWORD",
        ]);
        let c = a.connect(&[&plain]).unwrap().unwrap();
        assert_eq!(c.credentials().unwrap().1, "s3cret-from-env");
        let unset = args(&[
            "--mqtt-username",
            "u",
            "--mqtt-password-env",
            "ACP_TEST_UNSET_VAR",
        ]);
        let err = unset.connect(&[&plain]).unwrap_err();
        assert!(
            err.contains("ACP_TEST_UNSET_VAR") && err.contains("not set"),
            "{err}"
        );
        let err = args(&["--mqtt-username", "u"])
            .connect(&[&plain])
            .unwrap_err();
        assert!(err.contains("--mqtt-password-file"), "{err}");
        std::fs::write(&file, "\n").unwrap();
        let a = args(&[
            "--mqtt-username",
            "u",
            "--mqtt-password-file",
            file.to_str().unwrap(),
        ]);
        assert!(a.connect(&[&plain]).unwrap_err().contains("empty"));
    }

    #[test]
    fn tls_options_need_an_mqtts_broker_and_readable_pem_files() {
        let plain = broker("mqtt://127.0.0.1/acp");
        let secure = broker("mqtts://127.0.0.1/acp");
        assert_eq!(secure.port, 8883);
        let err = args(&["--mqtt-ca", "/nonexistent.pem"])
            .connect(&[&plain])
            .unwrap_err();
        assert_eq!(err, "--mqtt-ca applies to mqtts:// brokers only");
        let err = args(&["--mqtt-ca", "/nonexistent.pem"])
            .connect(&[])
            .unwrap_err();
        assert_eq!(err, "--mqtt-ca needs --publish mqtt:// or mqtts://");
        let err = args(&["--mqtt-ca", "/nonexistent.pem"])
            .connect(&[&secure])
            .unwrap_err();
        assert!(err.starts_with("--mqtt-ca /nonexistent.pem: "), "{err}");
        // A file with no certificate in it.
        let dir = acp_testkit::Scratch::new("acp-mqtt-empty");
        let empty = dir.file("empty.pem", "not a certificate\n");
        let err = args(&["--mqtt-ca", empty.to_str().unwrap()])
            .connect(&[&secure])
            .unwrap_err();
        assert!(err.contains("no PEM certificate"), "{err}");
        assert!(args(&[]).connect(&[]).unwrap().is_none());
        let c = args(&[]).connect(&[&plain]).unwrap().unwrap();
        assert!(c.tls.is_none() && c.login.is_none());
    }
}
