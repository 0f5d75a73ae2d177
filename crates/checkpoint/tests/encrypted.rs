//! `EncryptedSerializer` and `AesCipher`, against vectors written by Python LangGraph.
#![allow(clippy::unwrap_used, clippy::default_constructed_unit_structs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use stategraph_checkpoint::serde::encrypted::AES_KEY_ENV;
use stategraph_checkpoint::serde::{
    AesCipher, Cipher, EncryptedSerializer, JsonPlusSerializer, Serializer, Typed,
};
use stategraph_checkpoint::{list, map, Error, Ext, ObjectCode, Result, Value};

const KEY_32: &str = "303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f";

struct Vector {
    name: String,
    key: Vec<u8>,
    from_text: bool,
    tag: String,
    ciphertext: Vec<u8>,
    plaintext: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aes_vectors.json");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let field = |v: &serde_json::Value, k: &str| v[k].as_str().map(str::to_owned);
    json["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let (key, from_text) = match field(v, "key") {
                Some(hex_key) => (hex::decode(hex_key).unwrap(), false),
                None => (field(v, "key_text").unwrap().into_bytes(), true),
            };
            Vector {
                name: field(v, "name").unwrap(),
                key,
                from_text,
                tag: field(v, "tag").unwrap(),
                ciphertext: hex::decode(field(v, "ciphertext").unwrap()).unwrap(),
                plaintext: hex::decode(field(v, "plaintext").unwrap()).unwrap(),
            }
        })
        .collect()
}

/// The values `make_aes_vectors.py` encrypts, by name.
fn expected(name: &str) -> Value {
    match name {
        "none" => Value::Nil,
        "str" => "hi".into(),
        "map" => map! { "a" => 1 },
        "bytes" => Value::Bytes(b"\x00\x01binary\xff".to_vec().into()),
        "nested" => list![
            1,
            list![2.5, "x", Value::Nil],
            map! { "k" => list![true, -7] },
            "\u{e9}"
        ],
        other => panic!("unknown vector {other}"),
    }
}

#[test]
fn python_vectors_decrypt() {
    let vectors = vectors();
    assert_eq!(vectors.len(), 17);
    for key_len in [16, 24, 32] {
        assert!(vectors.iter().any(|v| v.key.len() == key_len));
    }
    for v in &vectors {
        let cipher = AesCipher::new(&v.key).unwrap();
        assert_eq!(
            cipher.decrypt("aes", &v.ciphertext).unwrap(),
            v.plaintext,
            "{}",
            v.name
        );
        let serde = EncryptedSerializer::aes(&v.key).unwrap();
        let value = serde.loads_typed(&v.tag, &v.ciphertext).unwrap();
        assert_eq!(
            value,
            expected(&v.name),
            "{} ({} byte key)",
            v.name,
            v.key.len()
        );
    }
}

#[test]
fn same_nonce_gives_pythons_bytes() {
    for v in vectors() {
        let cipher = AesCipher::new(&v.key).unwrap();
        let nonce: [u8; 16] = v.ciphertext[..16].try_into().unwrap();
        let sealed = cipher.encrypt_with_nonce(&nonce, &v.plaintext).unwrap();
        assert_eq!(
            hex::encode(sealed),
            hex::encode(&v.ciphertext),
            "{}",
            v.name
        );
        let inner = JsonPlusSerializer::default()
            .dumps_typed(&expected(&v.name))
            .unwrap();
        assert_eq!(format!("{}+aes", inner.tag), v.tag);
        assert_eq!(inner.bytes, v.plaintext, "{}", v.name);
    }
}

#[test]
fn key_is_read_from_the_environment_as_text() {
    let text_vectors: Vec<Vector> = vectors().into_iter().filter(|v| v.from_text).collect();
    assert!(!text_vectors.is_empty());
    // The only test of this binary that touches the environment.
    std::env::set_var(AES_KEY_ENV, "too short");
    assert!(matches!(AesCipher::from_env(), Err(Error::Cipher(_))));
    std::env::set_var(
        AES_KEY_ENV,
        String::from_utf8(text_vectors[0].key.clone()).unwrap(),
    );
    let serde = EncryptedSerializer::aes_from_env().unwrap();
    for v in &text_vectors {
        assert_eq!(
            serde.loads_typed(&v.tag, &v.ciphertext).unwrap(),
            expected(&v.name)
        );
    }
    std::env::remove_var(AES_KEY_ENV);
    assert!(matches!(AesCipher::from_env(), Err(Error::Cipher(_))));
}

fn uuid_value() -> Value {
    Ext::object(
        ObjectCode::ConstructorSingleArg,
        "uuid",
        "UUID",
        "0123456789abcdef0123456789abcdef".into(),
        None,
    )
    .into()
}

fn samples() -> Vec<Value> {
    vec![
        Value::Nil,
        "hi".into(),
        map! { "a" => 1, "b" => list![Value::UInt(u64::MAX), -1.5] },
        Value::bytes(vec![0, 1, 2, 255]),
        list![uuid_value(), map! { "nested" => list![Value::Nil, true] }],
    ]
}

#[test]
fn dumps_then_loads_round_trips() {
    let serde = EncryptedSerializer::aes(&hex::decode(KEY_32).unwrap()).unwrap();
    let plain = JsonPlusSerializer::default();
    for value in samples() {
        let inner = plain.dumps_typed(&value).unwrap();
        let sealed = serde.dumps_typed(&value).unwrap();
        assert_eq!(sealed.tag, format!("{}+aes", inner.tag));
        assert_eq!(sealed.bytes.len(), 32 + inner.bytes.len());
        assert_eq!(
            serde.loads_typed(&sealed.tag, &sealed.bytes).unwrap(),
            value
        );
        let again = serde.dumps_typed(&value).unwrap();
        assert_ne!(
            again.bytes[..16],
            sealed.bytes[..16],
            "nonces must be fresh"
        );
    }
    let none = serde.dumps_typed(&Value::Nil).unwrap();
    assert_eq!((none.tag.as_ref(), none.bytes.len()), ("null+aes", 32));
}

#[test]
fn unencrypted_tags_go_to_the_inner_serializer() {
    let serde = EncryptedSerializer::aes(&[7; 16]).unwrap();
    let inner = JsonPlusSerializer::default()
        .dumps_typed(&map! { "a" => 1 })
        .unwrap();
    assert_eq!(inner.tag, "msgpack");
    assert_eq!(
        serde.loads_typed("msgpack", &inner.bytes).unwrap(),
        map! { "a" => 1 }
    );
    assert_eq!(serde.loads_typed("null", b"").unwrap(), Value::Nil);
}

#[test]
fn tampering_wrong_keys_and_short_input_are_cipher_errors() {
    let key = hex::decode(KEY_32).unwrap();
    let serde = EncryptedSerializer::aes(&key).unwrap();
    let sealed = serde.dumps_typed(&map! { "secret" => "value" }).unwrap();
    let cipher_error = |r: Result<Value>| assert!(matches!(r, Err(Error::Cipher(_))), "{r:?}");
    for i in 0..sealed.bytes.len() {
        let mut bytes = sealed.bytes.clone();
        bytes[i] ^= 0x01;
        cipher_error(serde.loads_typed(&sealed.tag, &bytes));
    }
    for len in 0..32 {
        cipher_error(serde.loads_typed(&sealed.tag, &sealed.bytes[..len]));
    }
    cipher_error(serde.loads_typed(&sealed.tag, &sealed.bytes[..sealed.bytes.len() - 1]));
    let mut other_key = key.clone();
    other_key[0] ^= 0x80;
    let other = EncryptedSerializer::aes(&other_key).unwrap();
    cipher_error(other.loads_typed(&sealed.tag, &sealed.bytes));
    cipher_error(
        EncryptedSerializer::aes(&key[..16])
            .unwrap()
            .loads_typed(&sealed.tag, &sealed.bytes),
    );
    cipher_error(serde.loads_typed("msgpack+des", &sealed.bytes));
    cipher_error(serde.loads_typed("msgpack+aes+x", &sealed.bytes));
    for len in [0, 8, 15, 17, 31, 33, 64] {
        assert!(matches!(
            AesCipher::new(&vec![0; len]),
            Err(Error::Cipher(_))
        ));
    }
}

#[test]
fn debug_output_hides_the_key() {
    let cipher = AesCipher::new(&[0xab; 24]).unwrap();
    assert_eq!(cipher.key_bits(), 192);
    let debug = format!("{:?}", EncryptedSerializer::with_cipher(cipher));
    assert!(debug.contains("key_bits: 192"), "{debug}");
    assert!(
        !debug.contains("171") && !debug.to_lowercase().contains("ab, "),
        "{debug}"
    );
}

/// A cipher that records the names it is asked to decrypt with, and XORs the bytes.
#[derive(Debug, Default)]
struct Recording(Mutex<Vec<String>>);

impl Cipher for Recording {
    fn encrypt(&self, plaintext: &[u8]) -> Result<(String, Vec<u8>)> {
        Ok(("x+or".into(), plaintext.iter().map(|b| b ^ 0x5a).collect()))
    }
    fn decrypt(&self, cipher_name: &str, ciphertext: &[u8]) -> Result<Vec<u8>> {
        self.0.lock().unwrap().push(cipher_name.to_owned());
        Ok(ciphertext.iter().map(|b| b ^ 0x5a).collect())
    }
}

/// An inner serializer that writes strings as UTF-8 under the tag `text`.
#[derive(Debug)]
struct Text;

impl Serializer for Text {
    fn dumps_typed(&self, value: &Value) -> Result<Typed> {
        match value {
            Value::Str(s) => Ok(Typed::new("text", s.as_bytes().to_vec())),
            _ => Err(Error::Encode("text only".into())),
        }
    }
    fn loads_typed(&self, tag: &str, bytes: &[u8]) -> Result<Value> {
        match tag {
            "text" => Ok(String::from_utf8_lossy(bytes).into_owned().into()),
            _ => Err(Error::UnknownTag(tag.into())),
        }
    }
}

#[test]
fn any_cipher_and_inner_serializer_compose_splitting_at_the_first_plus() {
    let cipher = Arc::new(Recording::default());
    let serde = EncryptedSerializer::new(cipher.clone(), Arc::new(Text));
    let sealed = serde.dumps_typed(&"abc".into()).unwrap();
    assert_eq!(sealed.tag, "text+x+or");
    assert_eq!(sealed.bytes, [b'a' ^ 0x5a, b'b' ^ 0x5a, b'c' ^ 0x5a]);
    assert_eq!(
        serde.loads_typed(&sealed.tag, &sealed.bytes).unwrap(),
        "abc".into()
    );
    assert_eq!(*cipher.0.lock().unwrap(), ["x+or"]);
    assert!(matches!(
        serde.dumps_typed(&Value::Nil),
        Err(Error::Encode(_))
    ));
    assert!(matches!(
        serde.loads_typed("json+x", b""),
        Err(Error::UnknownTag(_))
    ));
}

fn venv_python() -> PathBuf {
    std::env::var_os("STATEGRAPH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/langgraph-venv/bin/python")
        })
}

const PYTHON_DECRYPT: &str = r#"
import sys
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
serde = EncryptedSerializer.from_pycryptodome_aes(key=bytes.fromhex(sys.argv[1]))
for line in sys.stdin.read().split():
    tag, ct = line.split(":")
    value = serde.loads_typed((tag, bytes.fromhex(ct)))
    inner_tag, inner = JsonPlusSerializer().dumps_typed(value)
    print(f"{inner_tag}:{inner.hex()}:{type(value).__name__}")
"#;

#[test]
fn python_decrypts_rust_output() {
    let python = venv_python();
    if !python.exists() {
        println!("skipped: no LangGraph venv at {}", python.display());
        return;
    }
    let values = samples();
    let plain = JsonPlusSerializer::default();
    for key in [&KEY_32[..32], &KEY_32[..48], KEY_32] {
        let serde = EncryptedSerializer::aes(&hex::decode(key).unwrap()).unwrap();
        let input: Vec<String> = values
            .iter()
            .map(|v| {
                let sealed = serde.dumps_typed(v).unwrap();
                format!("{}:{}", sealed.tag, hex::encode(&sealed.bytes))
            })
            .collect();
        let mut child = Command::new(&python)
            .args(["-c", PYTHON_DECRYPT, key])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.join("\n").as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "python failed");
        let lines: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let types = ["NoneType", "str", "dict", "bytes", "list"];
        assert_eq!(lines.len(), values.len());
        for ((line, value), ty) in lines.iter().zip(&values).zip(types) {
            let inner = plain.dumps_typed(value).unwrap();
            let expected = format!("{}:{}:{ty}", inner.tag, hex::encode(&inner.bytes));
            assert_eq!(line, &expected);
        }
    }
}
