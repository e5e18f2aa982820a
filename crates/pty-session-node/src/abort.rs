//! An `AbortSignal` as the library's cancellation token.
//!
//! A call given a signal adds one `abort` listener that cancels the call's
//! [`CancellationToken`], and removes it when the call ends: a harness may pass one
//! long-lived signal (an agent's turn) to many calls, and listeners left behind would pile
//! up on it. A signal already aborted cancels the call before it starts.

use napi::bindgen_prelude::{Function, FunctionRef, JsObjectValue, Object, ObjectRef, Unknown};
use napi::{Env, ValueType};
use pty_session::{CancellationToken, Error};

/// `addEventListener` and `removeEventListener` as called here: `(type, listener)`.
type ListenerMethod<'env> =
    Function<'env, napi::bindgen_prelude::FnArgs<(&'static str, Function<'env, (), ()>)>, ()>;

/// The listener a call added to its signal, removed by [`Listening::release`].
pub(crate) struct Listening {
    signal: ObjectRef<false>,
    listener: FunctionRef<(), ()>,
}

/// Ties `token` to `signal` (`undefined` or `null`: no signal). `Err` if `signal` is not
/// an `AbortSignal`.
pub(crate) fn listen(
    env: &Env,
    signal: Option<Unknown<'_>>,
    token: &CancellationToken,
) -> Result<Option<Listening>, Error> {
    let Some(signal) = signal else {
        return Ok(None);
    };
    let not_a_signal = || Error::invalid("signal", "must be an AbortSignal");
    match signal.get_type().map_err(|_| not_a_signal())? {
        ValueType::Undefined | ValueType::Null => return Ok(None),
        ValueType::Object => {}
        _ => return Err(not_a_signal()),
    }
    // SAFETY: the value is an object, checked above.
    let object: Object<'_> = unsafe { signal.cast() }.map_err(|_| not_a_signal())?;
    let aborted: Option<bool> = object
        .get_named_property::<Unknown<'_>>("aborted")
        .ok()
        .and_then(|value| match value.get_type() {
            // SAFETY: the value is a boolean, checked here.
            Ok(ValueType::Boolean) => unsafe { value.cast::<bool>() }.ok(),
            _ => None,
        });
    let add = object
        .get_named_property::<Unknown<'_>>("addEventListener")
        .ok()
        .filter(|value| matches!(value.get_type(), Ok(ValueType::Function)));
    let (Some(aborted), Some(add)) = (aborted, add) else {
        return Err(not_a_signal());
    };
    if aborted {
        token.cancel();
        return Ok(None);
    }
    let wire = || -> napi::Result<Listening> {
        let cancel = token.clone();
        let listener: Function<'_, (), ()> =
            env.create_function_from_closure("abort", move |_| {
                cancel.cancel();
                Ok(())
            })?;
        // SAFETY: the value is a function, checked above.
        let add: ListenerMethod<'_> = unsafe { add.cast() }?;
        add.apply(object, ("abort", listener).into())?;
        Ok(Listening {
            signal: object.create_ref()?,
            listener: listener.create_ref()?,
        })
    };
    wire().map(Some).map_err(|_| not_a_signal())
}

impl Listening {
    /// Removes the listener; on node's thread, when the call has ended.
    pub(crate) fn release(self, env: &Env) {
        let removed = || -> napi::Result<()> {
            let signal = self.signal.get_value(env)?;
            let listener = self.listener.borrow_back(env)?;
            let remove: ListenerMethod<'_> = signal.get_named_property("removeEventListener")?;
            remove.apply(signal, ("abort", listener).into())
        };
        // A signal whose removeEventListener fails keeps a listener that only cancels a
        // token nobody waits on any more: harmless.
        let _ = removed();
        let _ = self.signal.unref(env);
    }
}
