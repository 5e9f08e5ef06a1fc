# Sourced by images/*/build.sh: a Debian root filesystem from debootstrap
# (minbase), made an image tarball in the tools cache once, and pushed from
# there. No Docker, no base image to pull: crane writes the layer. The caller
# sets CRANE, arch and say().
#
#   debootstrap_image DIR SUITE PACKAGES TAG [HOOK]
#       debootstrap SUITE with PACKAGES (comma-separated) into a root
#       filesystem, run `HOOK ROOTFS LOG` on it (what the image adds or
#       removes; run under `||`, so set -e does not hold in it: it returns
#       non-zero itself on a failure), and write DIR/base-image.tar (an image tarball named TAG,
#       its layer compressed once here and pushed as it is later) and
#       DIR/.built. Root, for debootstrap.
#   push_image_tarball TARBALL TARGET [crane mutate flags...]
#       push it as TARGET for this platform, with PATH and the flags.
debootstrap_image() {
	local dir="$1" suite="$2" packages="$3" tag="$4" hook="${5:-}" tmp="$1.partial" rootfs name t0=$SECONDS
	name="$(basename "$dir")"
	# crane writes the image tarball: without it, minutes of debootstrap would be lost at the end.
	[[ -x "$CRANE" ]] || { say "crane is missing ($CRANE): \`make tools\` builds it (before this base)"; return 1; }
	command -v debootstrap >/dev/null || { say "debootstrap is missing: apt-get install debootstrap (as root)"; return 1; }
	((EUID == 0)) || { say "debootstrap needs root"; return 1; }
	rm -rf "$tmp" && mkdir -p "$tmp"
	rootfs="$tmp/rootfs"
	say "$name: debootstrap $suite (minbase, $packages) into $rootfs (log: $tmp/build.log)"
	debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" http://deb.debian.org/debian >"$tmp/build.log" 2>&1 ||
		{ tail -n 20 "$tmp/build.log" >&2; return 1; }
	if [[ -n "$hook" ]]; then
		"$hook" "$rootfs" "$tmp/build.log" || { tail -n 20 "$tmp/build.log" >&2; return 1; }
	fi
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
		"$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
	tar -C "$rootfs" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$tmp/base.tar" .
	"$CRANE" append --oci-empty-base -f "$tmp/base.tar" -t "$tag" -o "$tmp/base-image.tar" >>"$tmp/build.log" 2>&1
	rm -rf "$rootfs" "$tmp/base.tar"
	echo "$((SECONDS - t0))" >"$tmp/.seconds"
	touch "$tmp/.built"
	rm -rf "$dir" && mv "$tmp" "$dir"
	say "$name: built in $((SECONDS - t0)) s ($(du -h "$dir/base-image.tar" | cut -f1) compressed) into $dir"
}

push_image_tarball() {
	local tarball="$1" target="$2" log
	shift 2
	log="$(mktemp)"
	{
		"$CRANE" push "$tarball" "$target"
		"$CRANE" mutate "$target" --set-platform "linux/$arch" -e PATH=/usr/local/bin:/usr/bin:/bin "$@" -t "$target"
	} >"$log" 2>&1 || { say "pushing $target failed:"; tail -n 10 "$log" >&2; rm -f "$log"; return 1; }
	rm -f "$log"
}
