# Sourced by images/*/build.sh: push the hydration base to the registry and
# add one layer, a Python script at /opt/modelplane/NAME, as an image of its
# own. The caller sets registry, image, hub, base, arch, CRANE and say()
# (on_hydration_base, below, sets the four in the middle for the stand-ins).
#
#   push_script_image SCRIPT NAME [crane mutate flags...]
#
# The flags say how the image runs the script (--cmd or --entrypoint, ports,
# labels); the environment and the huggingface_hub label are the same for all.
push_script_image() {
	local script="$1" name="$2" t0=$SECONDS work base_ref target
	shift 2
	work="$(mktemp -d)"
	# shellcheck disable=SC2064 # the directory is this call's
	trap "rm -rf '$work'" EXIT
	base_ref="$registry/modelplane.local/hydration-base:$hub"
	target="$registry/$image"
	mkdir -p "$work/layer/opt/modelplane"
	cp "$script" "$work/layer/opt/modelplane/$name"
	tar -C "$work/layer" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$work/script.tar" .
	{
		"$CRANE" push "$base/base-image.tar" "$base_ref"
		"$CRANE" append -b "$base_ref" -f "$work/script.tar" -t "$target"
		"$CRANE" mutate "$target" --set-platform "linux/$arch" \
			-e PATH=/usr/local/bin:/usr/bin:/bin -e PYTHONUNBUFFERED=1 -e PYTHONDONTWRITEBYTECODE=1 \
			-l "ai.modelplane.huggingface-hub=$hub" "$@" -t "$target"
	} >"$work/push.log" 2>&1 || { say "pushing to $registry failed:"; tail -n 10 "$work/push.log" >&2; exit 1; }
	say "$image pushed as $target ($("$CRANE" digest "$target")) in $((SECONDS - t0)) s"
}

# on_hydration_base SAY_AS: for an image on the hydration image's base (the
# stand-ins: one Python, one huggingface_hub, built once). Sets CRANE, hub,
# base and arch, and builds the base as `images/hydration/build.sh --base`
# does when the tools cache has none. The caller sets repo and say().
on_hydration_base() {
	local suite=bookworm # the hydration base's suite (images/hydration/build.sh)
	eval "$(bash "$repo/tools/build.sh" env | grep -E '^(TOOLS_CACHE|CRANE)=' | sed 's/^/export /')"
	hub="$(sed -n "s/^export const HUGGINGFACE_HUB_VERSION = '\(.*\)';/\1/p" "$repo/functions/compose-model-cache-hydration/src/huggingface.ts")"
	[[ -n "$hub" ]] || { say "can't read HUGGINGFACE_HUB_VERSION"; exit 1; }
	base="$TOOLS_CACHE/hydration-base-$suite-huggingface_hub-$hub"
	arch="$(go env GOARCH 2>/dev/null || echo amd64)"
	[[ -f "$base/.built" ]] || SAY_AS="$1" bash "$repo/images/hydration/build.sh" --base
}
