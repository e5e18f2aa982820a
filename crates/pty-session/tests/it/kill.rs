//! Close kills the whole process tree, whatever the tree did to escape.

use std::time::{Duration, Instant};

use pty_session::{
    Config, OpenRequest, OwnedSession, Owner, PtyService, SendRequest, Status, TailRequest,
};

use crate::support::*;

/// Seven ways out of a process group, each recording its final pid in `$F`.
const ESCAPES: &str = r#"
sh -c 'echo $$ >> "$F"; exec sleep 1001' &
setsid sh -c 'echo $$ >> "$F"; exec sleep 1002' &
nohup sh -c 'echo $$ >> "$F"; exec sleep 1003' >/dev/null 2>&1 &
( sh -c 'echo $$ >> "$F"; exec sleep 1004' & )
setsid sh -c '( sh -c "echo \$\$ >> \"\$F\"; exec sleep 1005" & )' &
env -i F="$F" setsid sh -c 'echo $$ >> "$F"; exec sleep 1006' &
sh -c 'trap "" HUP TERM; echo $$ >> "$F"; sleep 1007; :' &
"#;

async fn escapes_then(
    tail: &str,
) -> (PtyService, Owner, pty_session::SessionId, Vec<i32>, TempDir) {
    let (pty, owner) = service();
    let dir = TempDir::new("kill");
    let file = dir.0.join("pids");
    let command = format!("trap '' HUP TERM; echo $$ >> \"$F\"; {ESCAPES} {tail}");
    let opened = open_recording(&pty, &owner, command, &file).await;
    eventually(
        "all escapes to record their pids",
        Duration::from_secs(10),
        || read_pids(&file).len() == 8,
    )
    .await;
    let pids = read_pids(&file);
    (pty, owner, opened.session_id, pids, dir)
}

#[tokio::test]
async fn close_leaves_no_survivor() {
    let (pty, owner, id, pids, _dir) = escapes_then("sleep 1000").await;
    assert!(
        pids.iter().all(|&pid| alive(pid)),
        "all running before close"
    );
    let start = Instant::now();
    assert!(pty.close(&owner, &id).await.unwrap());
    let took = start.elapsed();
    let survivors: Vec<_> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(survivors.is_empty(), "survivors after close: {survivors:?}");
    // SIGTERM is ignored by two of them, so close waited out the grace and used SIGKILL.
    assert!(took >= pty.config().close_grace, "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let err = pty.tail(&owner, &id, None).await.unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_SESSION");
}

#[tokio::test]
async fn close_after_the_leader_exited_leaves_no_survivor() {
    let (pty, owner, id, pids, _dir) = escapes_then("sleep 0.2; exit 4").await;
    eventually("the leader to exit", Duration::from_secs(10), || {
        !alive(pids[0])
    })
    .await;
    let alive_before: Vec<_> = pids[1..]
        .iter()
        .copied()
        .filter(|&pid| alive(pid))
        .collect();
    assert_eq!(
        alive_before.len(),
        7,
        "the escapes outlive their leader until close"
    );
    // The shim reports the exit right after it reaps the leader.
    let exited = pty_session::Status::Exited(pty_session::ExitStatus::Code(4));
    eventually_async(
        "the exit to be reported",
        Duration::from_secs(10),
        || async { pty.tail(&owner, &id, None).await.unwrap().status == exited },
    )
    .await;
    let err = pty
        .send(&owner, &id, SendRequest::new("x"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "NOT_RUNNING");
    assert!(pty.close(&owner, &id).await.unwrap());
    let survivors: Vec<_> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(survivors.is_empty(), "survivors after close: {survivors:?}");
}

#[tokio::test]
async fn plain_close_is_quick() {
    // A long grace, so that waiting it out cannot pass for a slow exit under load.
    let mut config = Config::default();
    config.close_grace = Duration::from_secs(10);
    let pty = PtyService::new(config);
    let owner = Owner::new("t");
    let opened = open(&pty, &owner, OpenRequest::new("bash --norc --noprofile -i")).await;
    let start = Instant::now();
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
    assert!(
        start.elapsed() < pty.config().close_grace,
        "bash dies on SIGHUP, no grace needed"
    );
    assert!(!alive(opened.pid as i32));
}

#[tokio::test]
async fn dropping_the_service_kills_its_sessions() {
    let pty = PtyService::new(Config::default());
    let owner = Owner::new("t");
    let opened = open(
        &pty,
        &owner,
        OpenRequest::new("sleep 1000").timeout(Duration::from_millis(200)),
    )
    .await;
    let pid = opened.pid as i32;
    assert!(alive(pid));
    let spawner = spawner_of(pid);
    let spare = pty_session_testkit::spare_of(spawner).await;
    drop(pty);
    eventually(
        "the session's process to die",
        Duration::from_secs(5),
        || !alive(pid),
    )
    .await;
    eventually(
        "the spawner and its spare to exit",
        Duration::from_secs(5),
        || !alive(spawner) && !alive(spare),
    )
    .await;
}

#[tokio::test]
async fn a_killed_spawner_or_spare_is_replaced_and_sessions_live_on() {
    let (pty, owner) = service();
    let first = open(&pty, &owner, OpenRequest::new("cat")).await;
    let spawner = spawner_of(first.pid as i32);
    let kill = |pid: i32| {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; the pid is
        // a process this test's service started and that is alive (checked above).
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    };
    let echo = async |word: &str| {
        let opened = open(&pty, &owner, OpenRequest::new(format!("echo {word}"))).await;
        assert_eq!(opened.initial_output.text, format!("{word}\n"));
    };

    // The spare waiting for the next request dies: the spawner forks another.
    let spare = pty_session_testkit::spare_of(spawner).await;
    kill(spare);
    echo("after-the-spare").await;

    // The spawner dies: the spare it left still serves one open, then a new spawner starts.
    kill(spawner);
    eventually("the spawner to die", Duration::from_secs(5), || {
        !alive(spawner)
    })
    .await;
    echo("served-by-the-orphaned-spare").await;
    echo("by-a-new-spawner").await;
    let second = open(&pty, &owner, OpenRequest::new("cat")).await;
    let now = spawner_of(second.pid as i32);
    assert_ne!(now, spawner, "a new spawner serves the service");
    // The new spawner keeps one spare.
    pty_session_testkit::spare_of(now).await;

    // The session started before all this runs on: its shim depends on neither.
    let sent = pty
        .send(&owner, &first.session_id, SendRequest::new("still here"))
        .await
        .unwrap();
    assert_eq!(sent.delta.text, "still here\nstill here\n");
    pty.close(&owner, &first.session_id).await.unwrap();
    assert!(!alive(first.pid as i32));
    pty.shutdown().await;
}

#[tokio::test]
async fn a_fork_of_200_children_is_closed() {
    let (pty, owner) = service();
    let dir = TempDir::new("fork200");
    let file = dir.0.join("pids");
    let command =
        r#"for i in $(seq 200); do sh -c 'echo $$ >> "$F"; exec sleep 1000' & done; wait"#;
    let opened = open_recording(&pty, &owner, command, &file).await;
    eventually("200 children", Duration::from_secs(30), || {
        read_pids(&file).len() == 200
    })
    .await;
    assert!(pty.close(&owner, &opened.session_id).await.unwrap());
    let survivors: Vec<_> = read_pids(&file)
        .into_iter()
        .filter(|&pid| alive(pid))
        .collect();
    assert!(survivors.is_empty(), "{} survivors", survivors.len());
}

/// A driver that holds its session as an `OwnedSession` leaves nothing behind when it is
/// dropped; one that closes it first closes it once.
#[tokio::test]
async fn an_owned_session_is_closed_when_dropped() {
    let (pty, owner) = service();
    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    let session = OwnedSession::new(&pty, owner.clone(), opened.session_id.clone());
    let tail = session.tail(TailRequest::everything()).await.unwrap();
    assert_eq!(tail.status, Status::Running);
    drop(session);
    eventually(
        "the dropped session's process to be gone",
        Duration::from_secs(10),
        || !alive(opened.pid) && pty.sessions(&owner).is_empty(),
    )
    .await;

    let opened = open(&pty, &owner, OpenRequest::new("cat")).await;
    let mut session = OwnedSession::new(&pty, owner.clone(), opened.session_id.clone());
    assert!(!session.is_closed());
    session.close().await;
    assert!(session.is_closed());
    assert!(!alive(opened.pid), "close waits until the tree is reaped");
    assert!(pty.sessions(&owner).is_empty());
    session.close().await;
    let err = session.tail(None).await.unwrap_err();
    assert_eq!(err.code(), "UNKNOWN_SESSION");
}

/// What outlives a plain kill of the command's group, each recording its pid in `$F`: the
/// command itself (it ignores SIGHUP and SIGTERM), a daemon in a process session of its
/// own, and a double-forked grandchild that ignores them too. The shim's pid goes to
/// `$F.shim`.
const HOLDOUTS: &str = r#"trap '' HUP TERM; echo $$ >> "$F"; echo $PPID > "$F.shim"
setsid -f sh -c 'echo $$ >> "$F"; exec sleep 1021'
( sh -c 'trap "" HUP TERM; echo $$ >> "$F"; exec sleep 1022' & )
"#;

/// Opens a session that starts [`HOLDOUTS`], then turns `attack` on its shim (`$PPID`),
/// and returns the service, the session, every pid it recorded and the shim's.
async fn disarmed(attack: &str) -> (PtyService, Owner, pty_session::SessionId, Vec<i32>) {
    let (pty, owner) = service();
    let dir = TempDir::new("disarm");
    let file = dir.0.join("pids");
    let done = dir.0.join("pids.done");
    let command = format!(
        "{HOLDOUTS}while [ $(wc -l < \"$F\") -lt 3 ]; do sleep 0.01; done\n{attack}\necho > \"$F.done\"\nexec sleep 1020"
    );
    let opened = open_recording(&pty, &owner, command, &file).await;
    eventually(
        "the holdouts to record their pids",
        Duration::from_secs(10),
        || read_pids(&file).len() == 3,
    )
    .await;
    // The attack landed once the command went on past it (or was killed for it).
    eventually("the attack to be made", Duration::from_secs(10), || {
        done.exists() || !alive(opened.pid as i32)
    })
    .await;
    let mut pids = read_pids(&file);
    let shim: i32 = std::fs::read_to_string(dir.0.join("pids.shim"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    pids.push(shim);
    (pty, owner, opened.session_id, pids)
}

/// Closes the session, which must return within the grace and a second, and leave none of
/// `pids` running, nor any unreaped.
async fn close_in_time(pty: &PtyService, owner: &Owner, id: &pty_session::SessionId, pids: &[i32]) {
    let bound = pty.config().close_grace + Duration::from_secs(1);
    let start = Instant::now();
    // A hang-catcher: today's bound, with room to tell "late" from "never".
    let closed = tokio::time::timeout(bound * 5, pty.close(owner, id)).await;
    let took = start.elapsed();
    eprintln!("close took {took:?} (bound {bound:?})");
    assert!(closed.is_ok(), "close hung for {took:?}");
    assert!(took < bound, "close took {took:?}, more than {bound:?}");
    let survivors: Vec<_> = pids.iter().copied().filter(|&pid| alive(pid)).collect();
    assert!(
        survivors.is_empty(),
        "survivors after close: {survivors:?} of {pids:?}"
    );
    // Nor zombies: whoever their parent is now (the spawner adopts them) reaps them.
    eventually(
        "the session's processes to be reaped",
        Duration::from_secs(2),
        || {
            pids.iter()
                .all(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        },
    )
    .await;
}

#[tokio::test]
async fn a_shim_without_descriptors_still_kills_the_tree() {
    require("prlimit");
    let (pty, owner, id, pids) = disarmed("prlimit --pid $PPID --nofile=0:0").await;
    close_in_time(&pty, &owner, &id, &pids).await;
}

#[tokio::test]
async fn a_shim_with_a_cpu_limit_and_no_descriptors_still_kills_the_tree() {
    require("prlimit");
    // The shim that spun on a failing poll died of this limit within two seconds of CPU,
    // leaving the daemons to init; one that does not spin never comes near it.
    let (pty, owner, id, pids) = disarmed("prlimit --pid $PPID --cpu=1:2 --nofile=0:0").await;
    close_in_time(&pty, &owner, &id, &pids).await;
}

#[tokio::test]
async fn a_stopped_shim_does_not_hold_up_close() {
    let (pty, owner, id, pids) = disarmed("kill -STOP $PPID").await;
    close_in_time(&pty, &owner, &id, &pids).await;
}

#[tokio::test]
async fn a_killed_shims_tree_dies_too() {
    let (pty, owner, id, pids) = disarmed("kill -KILL $PPID").await;
    // Without a close: the shim's death is enough.
    eventually(
        "the dead shim's tree to die",
        Duration::from_secs(2),
        || pids.iter().all(|&pid| !alive(pid)),
    )
    .await;
    close_in_time(&pty, &owner, &id, &pids).await;
}

#[tokio::test]
async fn a_stopped_shims_tree_dies_with_the_service() {
    let (pty, _owner, _id, pids) = disarmed("kill -STOP $PPID").await;
    drop(pty);
    // The service's death leaves every tree two seconds, whatever the shims do.
    eventually(
        "the stopped shim's tree to die",
        Duration::from_secs(2),
        || pids.iter().all(|&pid| !alive(pid)),
    )
    .await;
}
