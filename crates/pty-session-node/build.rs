//! Sets up the link of the Node.js addon (napi-rs: the N-API symbols resolve at load).

fn main() {
    napi_build::setup();
}
