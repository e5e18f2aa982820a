# pty-session's shell integration for fish, run by --init-command once fish read the
# user's configuration: hooks on fish's own events, and the user's prompt wrapped in the
# prompt's marks. Nothing of the user's is changed.
set -g __pty_key $PTY_SESSION_SHELL_KEY
set -e PTY_SESSION_SHELL_KEY
if test -n "$__pty_key"
    set -g __pty_running 0
    function __pty_preexec --on-event fish_preexec
        set -g __pty_running 1
        printf '\e]133;C;k=%s;cmdline_url=%s\a' $__pty_key (string escape --style=url -- $argv[1])
    end
    function __pty_postexec --on-event fish_postexec
        set -l st $status
        if test "$__pty_running" = 1
            printf '\e]133;D;%s;k=%s\a' $st $__pty_key
        end
        set -g __pty_running 0
    end
    function __pty_status
        return $argv[1]
    end
    if functions -q fish_prompt
        functions -c fish_prompt __pty_user_prompt
    else
        function __pty_user_prompt
            printf '%s> ' $PWD
        end
    end
    function fish_prompt
        set -l st $status
        printf '\e]7;file://%s%s;k=%s\a' $hostname (string escape --style=url -- $PWD) $__pty_key
        printf '\e]133;A;k=%s\a' $__pty_key
        __pty_status $st
        __pty_user_prompt
        printf '\e]133;B;k=%s\a' $__pty_key
    end
end
