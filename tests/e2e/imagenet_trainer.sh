#!/usr/bin/env bash
# The ImageNet trainer from the command line, at a reduced size: ResNet-18 at 32x32 on the mock
# dataset (eager) and on a folder of generated JPEGs (lazy, with torchvision's transforms); the
# log lines carry samples/s, ms/step, the data wait and peak memory, the CSV its columns, the
# evaluation top-1 and top-5; the batches, and so the losses, are the same with 0 and 3 loader
# workers; a folder that is not an ImageFolder and an unknown --arch are refused with exit 2.
#   imagenet_trainer.sh <scratch dir> <imagenet_resnet50> <make_image_folder>
set -euo pipefail
dir=$1 trainer=$2 make_folder=$3
rm -rf "$dir"
mkdir -p "$dir"
"$make_folder" "$dir/images" 4 12 3 >/dev/null
small=(--arch resnet18 --image-size 32 --num-classes 10 --batch-size 8 --max-steps 6
       --log-interval 3 --lr 0.01 --warmup-steps 0)
"$trainer" "${small[@]}" --train-limit 64 --test-limit 16 --log-csv "$dir/mock.csv" \
  >"$dir/mock.txt"
grep -q "^imagenet_resnet18: torchvision resnet18 (11181642 parameters), mock ImageNet 32x32, 10 classes, 64 train / 16 test examples" "$dir/mock.txt" ||
  { echo "configuration line:"; cat "$dir/mock.txt"; exit 1; }
num='[0-9][0-9.e+-]*'
grep -Eq "^step +3  epoch 1/1  loss $num  lr $num  $num samples/s  $num ms/step  data wait $num ms  peak $num MB$" "$dir/mock.txt" ||
  { echo "log line:"; cat "$dir/mock.txt"; exit 1; }
grep -Eq "^eval  step      6  epoch 1  loss $num  accuracy $num%  top-5 $num%$" "$dir/mock.txt" ||
  { echo "eval line:"; cat "$dir/mock.txt"; exit 1; }
tail -n +2 "$dir/mock.csv" | grep -Eq "^eval,6,1,,,,,,$num,$num,$num,$num$" ||
  { echo "eval row:"; cat "$dir/mock.csv"; exit 1; }
# The JPEG folder, lazily, with 0 and with 3 workers: the same batches, so the same losses.
for w in 0 3; do
  "$trainer" "${small[@]}" --data "$dir/images" --compiler-opt --num-workers "$w" \
    --log-interval 1 --log-csv "$dir/folder$w.csv" >"$dir/folder$w.txt"
done
grep -q "$dir/images (4 classes), RandomResizedCrop 32 + flip, 48 train / 12 test examples" \
  "$dir/folder3.txt" || { echo "folder configuration:"; cat "$dir/folder3.txt"; exit 1; }
grep -q "3 loader workers, lazy mode" "$dir/folder3.txt" ||
  { echo "no loader workers in the configuration:"; cat "$dir/folder3.txt"; exit 1; }
loss() { awk -F, '$1 == "train" { print $2, $4 }' "$1"; }
[ "$(loss "$dir/folder0.csv" | wc -l)" = 6 ] || { cat "$dir/folder0.csv"; exit 1; }
if [ "$(loss "$dir/folder0.csv")" != "$(loss "$dir/folder3.csv")" ]; then
  echo "losses differ between 0 and 3 loader workers:"
  paste <(loss "$dir/folder0.csv") <(loss "$dir/folder3.csv"); exit 1
fi
set +e
"$trainer" "${small[@]}" --data "$dir" >"$dir/bad.txt" 2>&1
rc=$?
"$trainer" --arch resnet5 >"$dir/arch.txt" 2>&1
rc_arch=$?
set -e
[ "$rc" = 2 ] && grep -q "error: ImageFolder: $dir/train is not a directory" "$dir/bad.txt" ||
  { echo "--data without train/: status $rc"; cat "$dir/bad.txt"; exit 1; }
[ "$rc_arch" = 2 ] && grep -q "error: --arch: resnet5 not in {resnet18,resnet34,resnet50,resnet101}" \
  "$dir/arch.txt" || { echo "--arch resnet5: status $rc_arch"; cat "$dir/arch.txt"; exit 1; }
echo "imagenet trainer ok"
