accelerate launch \
    --use_fsdp \
    --num_processes 8 \
    --mixed_precision bf16 \
    --fsdp_version 2 \
    --fsdp_auto_wrap_policy transformer_based_wrap \
    --fsdp_transformer_layer_cls_to_wrap LlamaDecoderLayer \
    --fsdp_reshard_after_forward true \
    --fsdp_state_dict_type SHARDED_STATE_DICT \
    train.py
