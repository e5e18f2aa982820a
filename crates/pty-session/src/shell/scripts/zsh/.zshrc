ZDOTDIR=$__pty_user_zdotdir
[[ -r $ZDOTDIR/.zshrc ]] && source "$ZDOTDIR/.zshrc"
__pty_user_zdotdir=$ZDOTDIR

if [[ -n $__pty_key ]]; then
    # idle: between a command's end and the prompt; prompt: the prompt shows; running.
    typeset -g __pty_state=idle __pty_ps1=
    __pty_escape() {
        local s=$1
        s=${s//\%/%25}; s=${s//;/%3B}; s=${s//$'\a'/%07}; s=${s//$'\e'/%1B}
        s=${s//$'\n'/%0A}; s=${s//$'\r'/%0D}
        REPLY=$s
    }
    __pty_precmd() {
        local st=$?
        if [[ $__pty_state == running ]]; then
            builtin printf '\e]133;D;%s;k=%s\a' $st $__pty_key
        elif [[ $__pty_state == prompt ]]; then
            PS1=$__pty_ps1
        fi
        __pty_escape "$PWD"
        builtin printf '\e]7;file://%s%s;k=%s\a' "$HOST" "$REPLY" $__pty_key
        __pty_ps1=$PS1
        PS1=$'%{\e]133;A;k='$__pty_key$'\a%}'$PS1$'%{\e]133;B;k='$__pty_key$'\a%}'
        __pty_state=prompt
        return $st
    }
    __pty_preexec() {
        PS1=$__pty_ps1
        __pty_state=running
        __pty_escape "$1"
        builtin printf '\e]133;C;k=%s;cmdline_url=%s\a' $__pty_key "$REPLY"
    }
    autoload -Uz add-zsh-hook
    add-zsh-hook precmd __pty_precmd
    add-zsh-hook preexec __pty_preexec
fi

# The user's files are read; what follows zsh's reading is the user's ZDOTDIR (a login
# shell's .zlogin first).
if [[ ! -o login ]]; then
    if [[ -n $__pty_unset_zdotdir ]]; then unset ZDOTDIR; else ZDOTDIR=$__pty_user_zdotdir; fi
    unset __pty_zdotdir __pty_user_zdotdir __pty_unset_zdotdir
fi
